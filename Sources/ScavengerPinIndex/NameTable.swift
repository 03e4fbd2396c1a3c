// Interned names: authors (counted, numbers reused), regions and photo MIME types.

extension PinIndex {
    func internAuthor(_ name: String) -> UInt32 {
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

    func releaseAuthor(_ number: UInt32) {
        authorUses[Int(number)] -= 1
        if authorUses[Int(number)] == 0 {
            authorNumbers[authors[Int(number)]] = nil
            authors[Int(number)] = ""
            freeAuthors.append(number)
        }
    }

    func internRegion(_ name: String) -> UInt32 {
        if let number = regionNumbers[name] { return number }
        let number = UInt32(regions.count)
        regions.append(name)
        regionStates.append(RegionState())
        regionNumbers[name] = number
        return number
    }

    func internMime(_ mime: String) -> UInt16 {
        if let number = mimeNumbers[mime] { return number }
        guard mimes.count <= Int(UInt16.max) else { return 0 }
        let number = UInt16(mimes.count)
        mimes.append(mime)
        mimeNumbers[mime] = number
        return number
    }
}
