import ScavengerCore

extension PinDraft {
    /// The draft with its photo's metadata removed (EXIF with GPS, XMP, comments…: see
    /// ``PhotoScrubber``); a photo that is not a well-formed file of its type is a bad argument.
    func withPhotoMetadataRemoved() throws(Refusal) -> PinDraft {
        guard let photo else { return self }
        var draft = self
        do {
            draft.photo = Photo(mime: photo.mime, data: try PhotoScrubber.scrub(photo.data))
        } catch {
            throw Refusal(.badArgument, error.description)
        }
        return draft
    }
}
