import ScavengerCore
import Testing

@Suite("Photo pixel limits")
struct PhotoPixelLimitsTests {
    let limits = PhotoPixelLimits()

    @Test("within the limits: nothing to say")
    func allowed() {
        #expect(limits.refusal(of: PhotoDimensions(width: 4_032, height: 3_024, interlaced: false)) == nil)
        #expect(limits.refusal(of: PhotoDimensions(width: 16_384, height: 2_000, interlaced: false)) == nil)
        #expect(limits.refusal(of: PhotoDimensions(width: 3_000, height: 3_000, interlaced: true)) == nil)
    }

    @Test("a side over 16,384, over 40 MP, over 10 MP interlaced, or no pixels: refused, saying why")
    func refused() {
        #expect(limits.refusal(of: PhotoDimensions(width: 64_250, height: 64_250, interlaced: false))
            == "photo is 64250 × 64250 pixels; at most 16384 a side")
        #expect(limits.refusal(of: PhotoDimensions(width: 20_000, height: 10, interlaced: false))
            == "photo is 20000 × 10 pixels; at most 16384 a side")
        #expect(limits.refusal(of: PhotoDimensions(width: 9_000, height: 9_000, interlaced: false))
            == "photo is 9000 × 9000 pixels; at most 40000000 pixels")
        #expect(limits.refusal(of: PhotoDimensions(width: 4_000, height: 3_000, interlaced: true))
            == "photo is 4000 × 3000 pixels and progressive or interlaced; at most 10000000 pixels then")
        #expect(limits.refusal(of: PhotoDimensions(width: 0, height: 10, interlaced: false)) == "photo has no pixels")
    }
}
