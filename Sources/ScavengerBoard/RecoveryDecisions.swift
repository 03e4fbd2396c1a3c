#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ScavengerCore
import ScavengerStore
import Sodium

/// The rules of reset and verification codes and the mail that carries them.
public struct RecoveryRules: Sendable, Equatable {
    /// Whether the daemon can send mail (`--smtp-url`); without it FORGOT, RESET and VERIFY
    /// answer `UNAVAILABLE`. Default off.
    public var mailEnabled: Bool
    /// The domain of the mails' Message-IDs (the part of `--mail-from` after the `@`).
    public var messageIDDomain: String
    /// How long a code works, in seconds; default 30 minutes.
    public var codeLifetimeSeconds: Int
    /// Wrong codes that void a code; default 5.
    public var wrongCodesToVoid: Int
    /// Mails of one kind per account per hour; beyond, silently none. Default 3.
    public var mailsPerAccountPerHour: Int
    /// Whether CREATEHUNT needs a verified email (`--hunts-need-verified-email`); default off.
    public var huntsNeedVerifiedEmail: Bool

    public init(
        mailEnabled: Bool = false, messageIDDomain: String = "scavenger.invalid", codeLifetimeSeconds: Int = 30 * 60,
        wrongCodesToVoid: Int = 5, mailsPerAccountPerHour: Int = 3, huntsNeedVerifiedEmail: Bool = false
    ) {
        self.mailEnabled = mailEnabled
        self.messageIDDomain = messageIDDomain
        self.codeLifetimeSeconds = codeLifetimeSeconds
        self.wrongCodesToVoid = wrongCodesToVoid
        self.mailsPerAccountPerHour = mailsPerAccountPerHour
        self.huntsNeedVerifiedEmail = huntsNeedVerifiedEmail
    }
}

/// A reset or verification code: 8 symbols of the join codes' alphabet (`A-Z 2-9` without
/// `I O 0 1`, 40 bits), typed in any case.
public struct RecoveryCode: Sendable, Hashable, CustomStringConvertible {
    /// The code in upper case.
    public let text: String
    /// A code's length.
    public static let length = 8

    /// The code a person typed, in any case; nil when it is not 8 symbols of the alphabet.
    public init?(typed: String) {
        var bytes: [UInt8] = []
        for byte in typed.utf8 {
            guard bytes.count < Self.length else { return nil }
            let upper = (UInt8(ascii: "a") ... UInt8(ascii: "z")).contains(byte) ? byte - 0x20 : byte
            guard JoinCode.alphabet.contains(upper) else { return nil }
            bytes.append(upper)
        }
        guard bytes.count == Self.length else { return nil }
        text = String(decoding: bytes, as: UTF8.self)
    }

    /// A new code, each symbol drawn uniformly from `generator`.
    public static func random(using generator: inout some RandomNumberGenerator) -> RecoveryCode {
        let symbols = (0 ..< length).map { _ in JoinCode.alphabet[Int(generator.next(upperBound: UInt8(JoinCode.alphabet.count)))] }
        return RecoveryCode(typed: String(decoding: symbols, as: UTF8.self))!
    }

    /// A new code from the system's random numbers.
    public static func random() -> RecoveryCode {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    public var description: String { text }
}

/// The pure decisions of account recovery, on facts the store read under locks.
public enum RecoveryDecisions {
    /// Whether a code is mailed: only to an account that has an email and has had fewer than
    /// the hourly number of such mails (past it, silently none).
    public static func shouldMail(_ facts: CodeIssueFacts, rules: RecoveryRules) -> Bool {
        guard facts.account != nil, let email = facts.email, !email.isEmpty else { return false }
        return facts.mailsInLastHour < rules.mailsPerAccountPerHour
    }

    /// The verdict on a typed code: no live code, an expired one or one already void is refused
    /// (nothing counted); a right code is accepted; a wrong one is counted, and voids the code
    /// when it is the last allowed.
    public static func verdict(on code: CodeRedeemFacts.LiveCode?, matches: Bool, rules: RecoveryRules) -> CodeVerdict {
        guard let code, !code.expired, code.wrongCodes < rules.wrongCodesToVoid else { return .refuse }
        if matches { return .accept }
        return .wrong(void: code.wrongCodes + 1 >= rules.wrongCodesToVoid)
    }
}

/// A plain-text mail template (`MailTemplates/*.txt`): a `Subject:` line, a blank line, the body;
/// `{{name}}`, `{{code}}` and `{{minutes}}` are filled in.
public struct MailTemplate: Sendable {
    public let subject: String
    public let body: String

    /// Reads a template's text; nil without a `Subject:` line and a blank line after it.
    public init?(_ text: String) {
        guard text.hasPrefix("Subject: "), let split = text.range(of: "\n\n") else { return nil }
        subject = String(text[text.index(text.startIndex, offsetBy: 9) ..< split.lowerBound])
        body = String(text[split.upperBound...])
    }

    /// The subject and body with the values filled in.
    public func render(name: String, code: String, minutes: Int) -> (subject: String, body: String) {
        func fill(_ text: String) -> String {
            text.replacingOccurrences(of: "{{name}}", with: name).replacingOccurrences(of: "{{code}}", with: code)
                .replacingOccurrences(of: "{{minutes}}", with: String(minutes))
        }
        return (fill(subject), fill(body))
    }

    /// The password-reset mail.
    public static let reset = MailTemplate(String(decoding: PackageResources.reset_txt, as: UTF8.self))!
    /// The email-verification mail.
    public static let verify = MailTemplate(String(decoding: PackageResources.verify_txt, as: UTF8.self))!
}
