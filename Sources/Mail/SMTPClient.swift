internal import CCurl
import NIOPosix
import Synchronization

/// Where and how mail is sent: an SMTP server's URL (`smtp://host:port`, upgraded with STARTTLS,
/// which the server must offer unless plain SMTP is allowed, or `smtps://host:port`, TLS from the
/// start), the sender's address, and the credentials, if the server wants them.
public struct SMTPConfiguration: Sendable {
    /// `smtp://host[:port]` or `smtps://host[:port]`, without a user or password.
    public var url: String
    /// The envelope sender and the From header.
    public var from: String
    /// The user name to log in with, if the server wants one (never part of `url`).
    public var username: String?
    /// The password to log in with (never part of `url`).
    public var password: String?
    /// PEM file of the certificate authorities to trust for TLS (default: the system's).
    public var caFile: String?
    /// Whether an `smtp://` server that offers no STARTTLS gets the mail in plain text (a relay on
    /// loopback); default false: such a server gets nothing (``SMTPError/isTLSUnavailable``).
    /// With it, STARTTLS is still used when offered.
    public var allowPlaintext: Bool
    /// Seconds one send may take in all (connecting included); default 30.
    public var timeoutSeconds: Int

    public init(
        url: String, from: String, username: String? = nil, password: String? = nil, caFile: String? = nil,
        allowPlaintext: Bool = false, timeoutSeconds: Int = 30
    ) {
        self.url = url
        self.from = from
        self.username = username
        self.password = password
        self.caFile = caFile
        self.allowPlaintext = allowPlaintext
        self.timeoutSeconds = timeoutSeconds
    }

    /// What is wrong with `url` and `from`, or nil: `url` must be an SMTP URL this client sends
    /// to, with no user or password in it (credentials go in the environment, never in a command
    /// line that any process list shows), and `from` must look like an address. `urlName` is
    /// where the URL came from, for the message (`--smtp-url` or an environment variable).
    public static func check(url: String, from: String, urlName: String = "--smtp-url") -> String? {
        let lower = url.lowercased()
        guard lower.hasPrefix("smtp://") || lower.hasPrefix("smtps://"), url.count > 8 else {
            return "\(urlName) must be smtp://host[:port] or smtps://host[:port]"
        }
        if hasUserInfo(url) {
            return "\(urlName) must not carry a user or password: give them in $SCAVENGER_SMTP_USER and "
                + "$SCAVENGER_SMTP_PASSWORD (a command line shows in every process list)"
        }
        guard from.utf8.count <= 254, let at = from.lastIndex(of: "@"), at != from.startIndex,
              from.index(after: at) != from.endIndex, !from.contains(where: { $0 == "<" || $0 == ">" || $0.isWhitespace })
        else { return "--mail-from must be an address like scavenger@example.org" }
        return nil
    }

    /// Whether the URL's authority (after `://`, up to the first `/`, `?` or `#`) has a user part.
    static func hasUserInfo(_ url: String) -> Bool {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return false }
        return url[url.index(colon, offsetBy: 3)...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }.contains("@")
    }

    /// Whether the URL is `smtp://` (STARTTLS), not `smtps://` (TLS from the start).
    public static func isStartTLS(_ url: String) -> Bool { url.lowercased().hasPrefix("smtp://") }
}

/// A plain-text mail to send.
public struct MailMessage: Sendable, Equatable {
    /// Its Message-ID without angle brackets: the same on every try, so a duplicate is recognisable.
    public var messageID: String
    public var to: String
    public var subject: String
    public var body: String
    /// When it was written, in seconds since 1970 (its Date header).
    public var date: Int64

    public init(messageID: String, to: String, subject: String, body: String, date: Int64) {
        self.messageID = messageID
        self.to = to
        self.subject = subject
        self.body = body
        self.date = date
    }
}

/// Why a send failed.
public struct SMTPError: Error, Sendable, CustomStringConvertible {
    /// Whether a later try may work (the server unreachable, a 4xx reply, a timeout), or never
    /// (a 5xx reply: the server refused the sender, the recipient or the mail).
    public var isPermanent: Bool
    /// Whether the `smtp://` server offered no STARTTLS (or refused it) and plain SMTP is not
    /// allowed: nothing was sent, not even the credentials. Not permanent: the server may offer it
    /// later.
    public var isTLSUnavailable = false
    /// libcurl's account of the failure, with the server's last reply code.
    public var description: String
}

/// Sends mail with libcurl's SMTP client. Each send is a blocking libcurl transfer run on a
/// thread of the client's own (never an event loop, never Swift's cooperative pool); sends
/// run one at a time.
public final class SMTPClient: Sendable {
    public let configuration: SMTPConfiguration
    private let thread: NIOThreadPool

    /// libcurl's global set-up, once per process, before any handle exists.
    private static let globalInit: Void = { _ = curl_global_init(CCURL_GLOBAL_DEFAULT) }()

    public init(configuration: SMTPConfiguration) {
        _ = Self.globalInit
        self.configuration = configuration
        thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
    }

    /// Stops the client's thread once the send under way (if any) is over.
    public func shutdown() async {
        try? await thread.shutdownGracefully()
    }

    /// Sends `message`; returns once the server accepted it (`250` after the data).
    public func send(_ message: MailMessage) async throws(SMTPError) {
        let configuration = configuration
        let text = Self.render(message, from: configuration.from)
        let result: Result<Void, SMTPError>
        do {
            result = try await thread.runIfActive { Self.transfer(text, to: message.to, configuration: configuration) }
        } catch {
            throw SMTPError(isPermanent: false, description: "the mail client is shutting down")
        }
        try result.get()
    }

    /// The mail as sent: headers, a blank line and the body, lines ending in CRLF.
    public static func render(_ message: MailMessage, from: String) -> String {
        var lines = [
            "Date: \(MailDate.rfc5322(seconds: message.date))",
            "From: \(from)",
            "To: \(message.to)",
            "Subject: \(MailHeader.encodedWord(message.subject))",
            "Message-ID: <\(message.messageID)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 8bit",
            "",
        ]
        var body = message.body.replacingCRLF()
        if body.hasSuffix("\n") { body.removeLast() }
        lines.append(contentsOf: body.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// One blocking SMTP transaction with libcurl.
    private static func transfer(_ text: String, to recipient: String, configuration: SMTPConfiguration) -> Result<Void, SMTPError> {
        guard let curl = curl_easy_init() else { return .failure(SMTPError(isPermanent: false, description: "curl_easy_init failed")) }
        defer { curl_easy_cleanup(curl) }
        var recipients: UnsafeMutablePointer<curl_slist>?
        recipients = curl_slist_append(recipients, "<\(recipient)>")
        defer { curl_slist_free_all(recipients) }
        var errorBuffer = [CChar](repeating: 0, count: Int(CCURL_ERROR_SIZE) + 1)
        var bytes = Array(text.utf8CString.dropLast())
        let code: CURLcode = bytes.withUnsafeMutableBufferPointer { data in
            errorBuffer.withUnsafeMutableBufferPointer { errors in
                var upload = ccurl_upload(data: data.baseAddress, length: data.count, offset: 0)
                return withUnsafeMutablePointer(to: &upload) { upload in
                    var setup = ccurl_setopt_string(curl, CURLOPT_URL, configuration.url)
                    func set(_ result: CURLcode) { if setup == CURLE_OK { setup = result } }
                    set(ccurl_setopt_pointer(curl, CURLOPT_ERRORBUFFER, errors.baseAddress))
                    set(ccurl_setopt_long(curl, CURLOPT_NOSIGNAL, 1))
                    set(ccurl_setopt_string(curl, CURLOPT_MAIL_FROM, "<\(configuration.from)>"))
                    set(ccurl_setopt_slist(curl, CURLOPT_MAIL_RCPT, recipients))
                    // STARTTLS required (only when plain SMTP is allowed: used when offered); a
                    // server without it gets nothing, not even MAIL FROM. smtps:// is TLS anyway.
                    set(ccurl_setopt_long(
                        curl, CURLOPT_USE_SSL, Int(configuration.allowPlaintext ? CURLUSESSL_TRY.rawValue : CURLUSESSL_ALL.rawValue)))
                    set(ccurl_setopt_long(curl, CURLOPT_TIMEOUT, configuration.timeoutSeconds))
                    set(ccurl_setopt_long(curl, CURLOPT_CONNECTTIMEOUT, min(10, configuration.timeoutSeconds)))
                    if let username = configuration.username { set(ccurl_setopt_string(curl, CURLOPT_USERNAME, username)) }
                    if let password = configuration.password { set(ccurl_setopt_string(curl, CURLOPT_PASSWORD, password)) }
                    if let caFile = configuration.caFile { set(ccurl_setopt_string(curl, CURLOPT_CAINFO, caFile)) }
                    set(ccurl_set_upload(curl, upload))
                    guard setup == CURLE_OK else { return setup }
                    return curl_easy_perform(curl)
                }
            }
        }
        _ = bytes
        guard code == CURLE_OK else {
            var response = 0
            _ = ccurl_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &response)
            let detail = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            let summary = String(cString: curl_easy_strerror(code))
            let message = "\(summary)\(detail.isEmpty ? "" : ": \(detail)")\(response > 0 ? " (SMTP \(response))" : "")"
            // No STARTTLS where it is required: nothing was sent; the server may offer it later.
            if code == CURLE_USE_SSL_FAILED {
                return .failure(SMTPError(
                    isPermanent: false, isTLSUnavailable: true,
                    description: "the SMTP server offers no STARTTLS and plain SMTP is not allowed: \(message)"))
            }
            // A 5xx reply is the server's final word; anything else may work later.
            return .failure(SMTPError(isPermanent: (500 ... 599).contains(response), description: message))
        }
        return .success(())
    }
}

extension String {
    /// The text with CRLF and lone CR turned into LF.
    fileprivate func replacingCRLF() -> String {
        var result = ""
        var previousCR = false
        for scalar in unicodeScalars {
            if scalar == "\r" {
                result.unicodeScalars.append("\n")
                previousCR = true
                continue
            }
            if scalar == "\n" && previousCR { previousCR = false; continue }
            previousCR = false
            result.unicodeScalars.append(scalar)
        }
        return result
    }
}

/// Header values.
enum MailHeader {
    /// `text` as is when it is printable ASCII, else as an RFC 2047 encoded word (UTF-8, base64).
    static func encodedWord(_ text: String) -> String {
        if text.utf8.allSatisfy({ (0x20 ... 0x7E).contains($0) }) { return text }
        return "=?UTF-8?B?\(base64(Array(text.utf8)))?="
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index ..< min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0 ..< 4 {
                out.append(position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 63] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// RFC 5322 dates, in UTC.
public enum MailDate {
    /// `Sun, 29 Nov 2026 10:28:26 +0000` for `seconds` since 1970.
    public static func rfc5322(seconds: Int64) -> String {
        let days = Int(seconds.quotientFloor(86400))
        let secondOfDay = Int(seconds - Int64(days) * 86400)
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let weekday = weekdays[((days % 7) + 7) % 7]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) +0000"
    }
}

extension Int64 {
    fileprivate func quotientFloor(_ divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? q - 1 : q
    }
}
