import Base64
import ScavengerCore
import Vips

extension PinDraft {
    /// The draft with its photo's metadata removed and its dimensions read (see
    /// ``Photo/checkedForStorage(limits:)``).
    func withPhotoMetadataRemoved(limits: PhotoPixelLimits) throws(BoardError) -> PinDraft {
        guard let photo else { return self }
        var draft = self
        draft.photo = try photo.checkedForStorage(limits: limits)
        return draft
    }
}

extension Photo {
    /// The photo as it is stored: its metadata removed (EXIF with GPS, XMP, comments…: see
    /// ``PhotoScrubber``) and its width and height read from its header, nothing decoded. A file
    /// that is not well formed (a truncated one), or that libvips may not open, is a bad
    /// argument; one whose header claims more pixels than `limits` allow (a decompression bomb)
    /// is too large.
    func checkedForStorage(limits: PhotoPixelLimits) throws(BoardError) -> Photo {
        let scrubbed: [UInt8]
        do {
            scrubbed = try PhotoScrubber.scrub(data)
        } catch {
            throw BoardError(.badArgument, error.description)
        }
        let header: ImageHeader
        do {
            header = try Vips.header(of: scrubbed)
        } catch {
            throw BoardError(.badArgument, "photo: unsupported or broken image")
        }
        let dimensions = PhotoDimensions(width: header.width, height: header.height, interlaced: header.interlaced)
        if let refusal = limits.refusal(of: dimensions) { throw BoardError(.tooLarge, refusal) }
        return Photo(mime: mime, data: scrubbed, dimensions: dimensions)
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
