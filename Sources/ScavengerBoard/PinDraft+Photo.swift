import Base64
import ScavengerCore

extension PinDraft {
    /// The draft with its photo's metadata removed (EXIF with GPS, XMP, comments…: see
    /// ``PhotoScrubber``); a photo that is not a well-formed file of its type is a bad argument.
    func withPhotoMetadataRemoved() throws(BoardError) -> PinDraft {
        guard let photo else { return self }
        var draft = self
        do {
            draft.photo = Photo(mime: photo.mime, data: try PhotoScrubber.scrub(photo.data))
        } catch {
            throw BoardError(.badArgument, error.description)
        }
        return draft
    }
}

extension Board {
    /// A photo as clients send it: strict base64 (alphabet, padding, length) of a JPEG, PNG, GIF
    /// or WebP image of at most the configured size. Decoded here, once.
    public func photo(fromBase64 text: String) throws(BoardError) -> Photo {
        let maximumBytes = rules.pins.maximumPhotoBytes
        let data: [UInt8]
        do {
            data = try Base64.decode(text, maximumDecodedLength: maximumBytes)
        } catch .tooLarge {
            throw BoardError(.tooLarge, "photo is larger than \(maximumBytes) bytes")
        } catch {
            throw BoardError(.badArgument, "photo: \(error)")
        }
        guard !data.isEmpty else { throw BoardError(.badArgument, "photo must not be empty") }
        guard let mime = Photo.mimeType(of: data) else {
            throw BoardError(.badArgument, "photo must be a JPEG, PNG, GIF or WebP image")
        }
        return Photo(mime: mime, data: data)
    }

    /// A photo's bytes as a reply carries them: base64 on one line.
    public static func base64(_ data: [UInt8]) -> String {
        Base64.encode(data)
    }
}
