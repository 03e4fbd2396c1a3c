import ScavengerBoard
import ScavengerCore
import ScavengerStore
import Testing

@Suite("Account recovery's decisions: codes, verdicts, mail limits, templates")
struct RecoveryDecisionTests {
    static let rules = RecoveryRules(mailEnabled: true)
    static let alice = Account(id: 1, user: User(name: "alice", role: .user))

    static func code(wrong: Int = 0, expired: Bool = false) -> CodeRedeemFacts.LiveCode {
        CodeRedeemFacts.LiveCode(hash: "h", wrongCodes: wrong, expired: expired, email: "a@example.org")
    }

    @Test("the verdict on a typed code", arguments: [
        (nil as CodeRedeemFacts.LiveCode?, true, CodeVerdict.refuse),
        (nil, false, .refuse),
        (code(), true, .accept),
        (code(), false, .wrong(void: false)),
        (code(wrong: 3), false, .wrong(void: false)),
        (code(wrong: 4), false, .wrong(void: true)),
        (code(wrong: 4), true, .accept),
        (code(wrong: 5), true, .refuse),
        (code(wrong: 5), false, .refuse),
        (code(expired: true), true, .refuse),
        (code(expired: true), false, .refuse),
    ])
    func verdict(code: CodeRedeemFacts.LiveCode?, matches: Bool, expected: CodeVerdict) {
        #expect(RecoveryDecisions.verdict(on: code, matches: matches, rules: Self.rules) == expected)
    }

    @Test("a code is mailed only to an account with an email, under the hourly limit", arguments: [
        (alice as Account?, "a@example.org" as String?, 0, true),
        (alice, "a@example.org", 2, true),
        (alice, "a@example.org", 3, false),
        (alice, "a@example.org", 50, false),
        (alice, "", 0, false),
        (alice, nil, 0, false),
        (nil, nil, 0, false),
    ])
    func shouldMail(account: Account?, email: String?, mails: Int, expected: Bool) {
        let facts = CodeIssueFacts(account: account, email: email, mailsInLastHour: mails)
        #expect(RecoveryDecisions.shouldMail(facts, rules: Self.rules) == expected)
    }

    @Test("codes are 8 of the join codes' alphabet, typed in any case", arguments: [
        ("ABCD2345", "ABCD2345"), ("abcd2345", "ABCD2345"), ("AbCd2345", "ABCD2345"),
        ("ABCD234", nil), ("ABCD23456", nil), ("ABCD234O", nil), ("ABCD2341", nil), ("ABCDI345", nil),
        ("ABCD 345", nil), ("", nil), ("ÀBCD2345", nil),
    ] as [(String, String?)])
    func typedCodes(typed: String, expected: String?) {
        #expect(RecoveryCode(typed: typed)?.text == expected)
    }

    @Test("a random code is a valid code")
    func randomCodes() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0 ..< 200 {
            let code = RecoveryCode.random(using: &generator)
            #expect(RecoveryCode(typed: code.text) == code)
        }
    }

    @Test("the templates carry the code on its own line, what it is for, how long it lasts, and what to do if it was not you")
    func templates() {
        for template in [MailTemplate.reset, MailTemplate.verify] {
            let text = template.render(name: "alice", code: "ABCD2345", minutes: 30)
            #expect(text.body.contains("\n    ABCD2345\n"))
            #expect(text.body.contains("30 minutes"))
            #expect(text.body.contains("If this was not you"))
            #expect(!text.subject.isEmpty && !text.subject.contains("{{"))
            #expect(!text.body.contains("{{"))
        }
        #expect(MailTemplate.reset.render(name: "alice", code: "ABCD2345", minutes: 30).body.contains("RESET alice ABCD2345"))
        #expect(MailTemplate("no subject line") == nil)
    }
}
