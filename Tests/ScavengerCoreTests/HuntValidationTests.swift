import ScavengerCore
import Testing

/// Whether `check` accepts (does not throw).
private func accepts(_ check: () throws(ValidationError) -> Void) -> Bool {
    do {
        try check()
        return true
    } catch {
        return false
    }
}

/// The message `check` throws, or nil when it accepts.
private func message(_ check: () throws(ValidationError) -> Void) -> String? {
    do {
        try check()
        return nil
    } catch {
        return error.message
    }
}

private func repeated(_ text: String, _ count: Int) -> String { String(repeating: text, count: count) }

@Suite("Hunt and stop rules")
struct HuntValidationTests {
    @Test("hunt names: 1 to 80 characters, the text rules of POST", arguments: [
        ("x", true), (repeated("x", 80), true), (repeated("😀", 80), true), ("Old town\nwalk\t2", true),
        ("", false), (repeated("x", 81), false), (repeated("😀", 81), false), ("bell\u{7}", false), ("cr\r", false),
        ("c1\u{85}", false), ("spoof\u{202E}gpj.exe", false), ("isolate\u{2066}", false),
    ])
    func huntNames(name: String, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.huntName(name) } == valid)
    }

    @Test("descriptions: up to 2,000 characters, may be empty", arguments: [
        ("", true), (repeated("d", 2000), true), (repeated("é", 2000), true), ("two\nlines", true),
        (repeated("d", 2001), false), ("nul\u{0}", false), ("del\u{7F}", false), ("\u{202A}", false),
    ])
    func descriptions(text: String, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.huntDescription(text) } == valid)
    }

    @Test("stop titles: 1 to 80 characters", arguments: [
        ("t", true), (repeated("t", 80), true), ("", false), (repeated("t", 81), false), ("esc\u{1B}", false),
        ("\u{2069}", false),
    ])
    func titles(text: String, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.stopTitle(text) } == valid)
    }

    @Test("clues: up to 500 characters, may be empty", arguments: [
        ("", true), (repeated("c", 500), true), ("look\tunder\nthe bench", true), (repeated("c", 501), false),
        ("vt\u{0B}", false), ("\u{202D}", false),
    ])
    func clues(text: String, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.clue(text) } == valid)
    }

    @Test("messages name the field and the rule", arguments: [
        ("name", "", "name must not be empty"),
        ("name", repeated("x", 81), "name must be at most 80 characters long"),
        ("DESCRIPTION", repeated("x", 2001), "DESCRIPTION must be at most 2000 characters long"),
        ("title", "", "title must not be empty"),
        ("CLUE", repeated("x", 501), "CLUE must be at most 500 characters long"),
        ("CLUE", "a\u{0}", "CLUE must not contain control characters other than newline and tab"),
        ("title", "a\u{202E}", "title must not contain bidirectional embedding, override or isolate controls (U+202A to U+202E, U+2066 to U+2069)"),
    ])
    func textMessages(field: String, text: String, expected: String) {
        let thrown = message { () throws(ValidationError) in
            switch field {
            case "name": try Validation.huntName(text)
            case "DESCRIPTION": try Validation.huntDescription(text)
            case "title": try Validation.stopTitle(text)
            default: try Validation.clue(text)
            }
        }
        #expect(thrown == expected)
    }

    @Test("stop codes: 4 to 64 characters, no control or bidirectional characters", arguments: [
        ("abcd", true), (repeated("z", 64), true), ("ÄÖÜß", true), ("with space", true), (repeated("🔑", 64), true),
        ("abc", false), (repeated("z", 65), false), ("", false), ("tab\tcode", false), ("new\nline", false),
        ("code\u{202E}", false), ("\u{7F}abcd", false),
    ])
    func codes(code: String, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.stopCode(code) } == valid)
    }

    @Test("PROOF code needs CODE, and CODE needs PROOF code", arguments: [
        (StopProof.place, nil as String?, nil as String?),
        (.photo, nil, nil),
        (.code, "open sesame", nil),
        (.code, nil, "PROOF code needs CODE"),
        (.code, "abc", "CODE must be 4 to 64 characters long"),
        (.place, "abcd", "CODE is only for PROOF code"),
        (.photo, "abcd", "CODE is only for PROOF code"),
    ])
    func proofAndCode(proof: StopProof, code: String?, expected: String?) {
        #expect(message { () throws(ValidationError) in try Validation.stopProof(proof, code: code) } == expected)
    }

    @Test("radius_m: 5 to 1,000 metres, fractions allowed", arguments: [
        (5.0, true), (1000.0, true), (5.5, true), (999.999, true),
        (5.0.nextDown, false), (1000.0.nextUp, false), (0.0, false), (-10.0, false), (.nan, false), (.infinity, false),
    ])
    func radius(meters: Double, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.stopRadius(meters) } == valid)
    }

    @Test("points and BONUS: 0 to 10,000", arguments: [
        (0, true), (10_000, true), (1, true), (-1, false), (10_001, false), (Int.min, false), (Int.max, false),
    ])
    func pointsAndBonus(points: Int, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.stopPoints(points) } == valid)
        #expect(accepts { () throws(ValidationError) in try Validation.bonus(points) } == valid)
    }

    @Test("number messages say the bounds and the value")
    func numberMessages() {
        #expect(message { () throws(ValidationError) in try Validation.stopPoints(10_001) } == "points must be between 0 and 10000, got 10001")
        #expect(message { () throws(ValidationError) in try Validation.bonus(-1) } == "BONUS must be between 0 and 10000, got -1")
        #expect(message { () throws(ValidationError) in try Validation.stopRadius(4) } == "radius_m must be between 5 and 1000")
        #expect(message { () throws(ValidationError) in try Validation.huntDuration(0) } == "DURATION must be between 1 and 2592000, got 0")
        #expect(message { () throws(ValidationError) in try Validation.extendSeconds(0) } == "seconds must be between 1 and 3153600000, got 0")
    }

    @Test("DURATION: 1 second to 30 days", arguments: [
        (1, true), (2_592_000, true), (3600, true), (0, false), (-1, false), (2_592_001, false),
    ])
    func duration(seconds: Int, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.huntDuration(seconds) } == valid)
    }

    @Test("EXTEND seconds: at least 1, at most 100 years", arguments: [
        (1, true), (3_153_600_000, true), (0, false), (-5, false), (3_153_600_001, false), (Int.max, false),
    ])
    func extendSeconds(seconds: Int, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.extendSeconds(seconds) } == valid)
    }

    @Test("player names follow the username rules", arguments: [
        ("abc", true), (repeated("p", 32), true), ("A_b.c-9", true),
        ("ab", false), (repeated("p", 33), false), ("two words", false), ("ünï", false), ("", false),
    ])
    func playerNames(name: String, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.playerName(name) } == valid)
    }

    @Test("team names: 1–40 of the username's characters and spaces, no space first or last", arguments: [
        ("A", true), ("Red Foxes", true), (repeated("t", 40), true), ("a.b-c_d 9", true), ("two  spaces", true),
        ("", false), (repeated("t", 41), false), (" lead", false), ("trail ", false), ("comma,", false), ("Rød", false),
        ("tab\there", false),
    ])
    func teamNames(name: String, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.teamName(name) } == valid)
    }

    @Test("a player name's message says it follows the username rules")
    func playerNameMessage() {
        #expect(message { () throws(ValidationError) in try Validation.playerName("ab") }
            == "a player's name follows the username rules: username must be 3 to 32 characters long")
    }

    @Test("ACCURACY: a number of metres, at least 0", arguments: [
        (0.0, true), (0.5, true), (1e6, true), (-0.0, true), (0.0.nextDown, false), (-1.0, false), (.nan, false),
        (.infinity, false),
    ])
    func accuracy(meters: Double, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.accuracy(meters) } == valid)
    }

    @Test("coordinates: latitude in [-90, 90], longitude in [-180, 180]", arguments: [
        (90.0, 180.0, true), (-90.0, -180.0, true), (0.0, 0.0, true), (90.0.nextUp, 0.0, false), ((-90.0).nextUp, 0.0, true),
        ((-90.0).nextDown, 0.0, false), (0.0, 180.0.nextUp, false), (0.0, (-180.0).nextDown, false), (.nan, 0.0, false),
        (0.0, .nan, false),
    ])
    func coordinates(lat: Double, lon: Double, valid: Bool) {
        #expect(accepts { () throws(ValidationError) in try Validation.coordinates(lat: lat, lon: lon) } == valid)
    }

    @Test("a hunt holds at most maximumStops stops", arguments: [
        (HuntRules(), 99, true), (HuntRules(), 100, false), (HuntRules(), 0, true),
        (HuntRules(maximumStops: 3), 2, true), (HuntRules(maximumStops: 3), 3, false), (HuntRules(maximumStops: 1), 0, true),
        (HuntRules(maximumStops: 1), 1, false),
    ])
    func stopLimit(rules: HuntRules, holding: Int, room: Bool) {
        do {
            try rules.checkRoomForStop(holding: holding)
            #expect(room)
        } catch {
            #expect(!room)
            #expect(error.message == "a hunt holds at most \(rules.maximumStops) stops")
        }
    }

    @Test("the rules' defaults are the contract's")
    func defaults() {
        let rules = HuntRules()
        #expect(rules.maximumStops == 100)
        #expect(rules.codeGuesses == 5)
        #expect(rules.codeGuessWindowSeconds == 600)
        #expect(rules.travelCheckMinimumMeters == 1000)
        #expect(rules.maximumTravelSpeedKmh == 200)
        #expect(HuntLimits.durationSeconds == 1 ... 30 * 24 * 3600)
    }
}
