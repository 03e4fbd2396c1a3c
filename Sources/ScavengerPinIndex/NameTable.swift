/// Strings many pins share, each stored once and named by a number in the cold records:
/// authors (counted, a number is reused once its last pin is gone), region names (number 0
/// is "none") and photo MIME types (0 is "no photo").
struct NameTable {
    /// Authors by number; "" for a number free for reuse.
    private(set) var authors: [String] = []
    private var authorUses: [UInt32] = []
    private var authorNumbers: [String: UInt32] = [:]
    private var freeAuthors: [UInt32] = []
    /// Region names by number; region 0 is "none".
    private(set) var regions: [String] = [""]
    private var regionNumbers: [String: UInt32] = [:]
    /// Photo MIME types by number; 0 is "no photo".
    private(set) var mimes: [String] = [""]
    private var mimeNumbers: [String: UInt16] = [:]

    /// Bytes held, roughly.
    var approximateBytes: Int {
        (authors.capacity + regions.capacity + mimes.capacity) * 16 + authorNumbers.capacity * 24
    }

    /// The author's number, counting one more use.
    mutating func internAuthor(_ name: String) -> UInt32 {
        if let number = authorNumbers[name] {
            authorUses[Int(number)] += 1
            return number
        }
        let number: UInt32
        if let reused = freeAuthors.popLast() {
            number = reused
            authors[Int(number)] = name
            authorUses[Int(number)] = 1
        } else {
            number = UInt32(authors.count)
            authors.append(name)
            authorUses.append(1)
        }
        authorNumbers[name] = number
        return number
    }

    /// Counts one use fewer; frees the number after the last.
    mutating func releaseAuthor(_ number: UInt32) {
        authorUses[Int(number)] -= 1
        if authorUses[Int(number)] == 0 {
            authorNumbers[authors[Int(number)]] = nil
            authors[Int(number)] = ""
            freeAuthors.append(number)
        }
    }

    /// The region's number, the next one for a name not seen before. Never freed.
    mutating func internRegion(_ name: String) -> UInt32 {
        if let number = regionNumbers[name] { return number }
        let number = UInt32(regions.count)
        regions.append(name)
        regionNumbers[name] = number
        return number
    }

    /// The region's number; nil for a name never interned.
    func regionNumber(_ name: String) -> UInt32? { regionNumbers[name] }

    /// The MIME type's number; 0 ("no photo") once all 65,535 are taken.
    mutating func internMime(_ mime: String) -> UInt16 {
        if let number = mimeNumbers[mime] { return number }
        guard mimes.count <= Int(UInt16.max) else { return 0 }
        let number = UInt16(mimes.count)
        mimes.append(mime)
        mimeNumbers[mime] = number
        return number
    }
}
