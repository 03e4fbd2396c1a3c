import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOPosix
import Postgres
import ProxyHeaders
import ScavengerCore
import ScavengerFeed
import ScavengerGeography
import ScavengerBoard
import ScavengerHTTP
import ScavengerProtocol
import ScavengerServer
import ScavengerStore
import ScavengerTLS
import ServiceLifecycle
import Sodium
import UnixSignals

@main
struct Scavengerd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scavengerd",
        abstract: "The Scavenger daemon: pins on a map, their chat, and its moderation, over a line protocol.",
        version: ServerVersion.daemon,
        subcommands: [Serve.self, Migrate.self, Expire.self, UserCommand.self, RegionCommand.self, Commands.self, Limits.self]
    )
}

/// Options every subcommand that talks to the database shares.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"), help: "libpq connection string or URI (default: $DATABASE_URL).")
    var databaseURL: String?

    func configuration() throws -> PostgresConfiguration {
        guard let url = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else {
            throw CLIError("no database: pass --database-url or set DATABASE_URL")
        }
        return PostgresConfiguration(connectionString: url)
    }
}

/// A one-line failure for stderr.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs a subcommand body; any failure becomes one line on stderr and exit status 1.
func reportingFailure(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ExitCode {
        throw error
    } catch {
        let message = String(describing: error).split(whereSeparator: \.isNewline).joined(separator: " ")
        FileHandle.standardError.write(Data("scavengerd: \(message)\n".utf8))
        throw ExitCode.failure
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the daemon until SIGTERM or SIGINT.")

    @Option(help: "Address to listen on (with TLS too, unless --tls-host).") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0 picks a free one).") var port = 7467
    @Option(help: "Also listen with TLS on this port (needs --tls-cert and --tls-key).") var tlsPort: Int?
    @Option(help: "PEM certificate chain for TLS, the server's certificate first (e.g. certbot's fullchain.pem).")
    var tlsCert: String?
    @Option(help: "PEM private key of the TLS certificate (e.g. certbot's privkey.pem).") var tlsKey: String?
    @Option(help: "Address to listen on with TLS (default: --host).") var tlsHost: String?
    @Option(help: "Also serve HTTP on this port, same host as --host: GET /ws (the protocol over a WebSocket), /healthz, /metrics, the demo, hunt and console pages.")
    var httpPort: Int?
    @Option(help: "PEM certificate chain that makes --http-port HTTPS (with --http-tls-key); phones give the pages their location only over HTTPS.")
    var httpTlsCert: String?
    @Option(help: "PEM private key of --http-tls-cert.") var httpTlsKey: String?
    @OptionGroup var database: DatabaseOptions
    @Option(help: "Longest request line in bytes.") var maxLineBytes = ServeDefaults.maxLineBytes
    @Option(help: "Longest HTTP request line in bytes on the HTTP port (longer gets 414).")
    var maxHttpRequestLineBytes = ServeDefaults.maxHttpRequestLineBytes
    @Option(help: "Longest HTTP request head (request line and header fields) in bytes on the HTTP port (longer gets 431).")
    var maxHttpHeaderBytes = ServeDefaults.maxHttpHeaderBytes
    @Option(help: "Origins a /ws WebSocket may be opened from, comma-separated (e.g. https://app.example.org); requests with no Origin are always accepted (default: any).")
    var allowedOrigins: String?
    @Option(help: "Directory of Leaflet's leaflet.js, leaflet.css and images/, served at /vendor/leaflet/ for the hunt pages (default: Debian's libjs-leaflet).")
    var leafletDirectory = HTTPConfiguration.debianLeafletDirectory
    @Option(help: "Proxies (IPv4/IPv6 CIDRs or addresses, comma-separated) whose word on the client's address is taken: a PROXY header (v1 or v2) on the line ports, Forwarded or X-Forwarded-For on the HTTP port; every per-address limit then uses that address (default: none).")
    var trustedProxies: String?
    @Option(help: "Connections served at once.") var maxConnections = ServeDefaults.maxConnections
    @Option(help: "Connections served at once from one client address.") var maxConnectionsPerAddress = ServeDefaults.maxConnectionsPerAddress
    @Option(help: "Seconds of silence before a connection is closed (0: never).") var idleTimeout = ServeDefaults.idleTimeout
    @Option(help: "Seconds a client has to finish a request line once started (0: no limit).") var lineTimeout = ServeDefaults.lineTimeout
    @Option(help: "Unsent reply bytes per connection above which it is neither answered nor read until the client reads.")
    var outputBufferBytes = ServeDefaults.outputBufferBytes
    @Option(help: "PostgreSQL connections in the pool.") var databaseConnections = ServeDefaults.databaseConnections
    @Option(help: "Seconds a command may wait for the database in all before it answers ERR UNAVAILABLE.") var databaseTimeout = ServeDefaults.databaseTimeout
    @Option(help: "Groups of text pins written at once (group commit; 1 makes the largest groups).") var pinWriters = 1
    @Option(help: "A standby for the start-up loads of pins and rankings (libpq URL; sessions prefer a standby unless it sets target_session_attrs); the log is followed on --database-url. Default: $READ_DATABASE_URL, else none.")
    var readDatabaseUrl: String?
    @Option(help: "Groups of check-ins written at once (group commit; 0 writes each check-in alone).") var checkInWriters = 2
    @Option(help: "Seconds a pin lives when POST gives no TTL (default 48 hours).") var defaultTtl = ServeDefaults.defaultTtl
    @Option(help: "Longest TTL a client may ask for, in seconds (default 30 days).") var maxTtl = ServeDefaults.maxTtl
    @Option(help: "Largest photo in bytes, decoded (default 5 MiB).") var maxPhotoBytes = ServeDefaults.maxPhotoBytes
    @Option(help: "Seconds a login session lasts (default 30 days).") var sessionTtl = ServeDefaults.sessionTtl
    @Option(help: "Largest NEARBY radius in metres.") var maxRadius = ServeDefaults.maxRadius
    @Option(help: "Watches one connection may hold at once.") var maxWatchesPerConnection = ServeDefaults.maxWatchesPerConnection
    @Option(help: "Unsent watch event bytes per connection before the watch at fault gets an overflow event and ends.")
    var maxEventBytes = ServeDefaults.maxEventBytes
    @Option(help: "Distinct reporters that hide an item until a moderator decides.") var reportThreshold = ServeDefaults.reportThreshold
    @Option(help: "Seconds a moderator's claim lasts.") var claimSeconds = ServeDefaults.claimSeconds
    @Option(help: "POSTs per user, as COUNT/SECONDS (a burst of COUNT, refilled over SECONDS), or off.")
    var postRate = RateFlag(ServeDefaults.postRate)
    @Option(help: "POSTPHOTOs per user (COUNT/SECONDS or off).") var photoRate = RateFlag(ServeDefaults.photoRate)
    @Option(help: "REPLYs per user (COUNT/SECONDS or off).") var replyRate = RateFlag(ServeDefaults.replyRate)
    @Option(help: "REPORTs per user (COUNT/SECONDS or off).") var reportRate = RateFlag(ServeDefaults.reportRate)
    @Option(help: "JOINs and LEAVEs together per user (COUNT/SECONDS or off).") var joinRate = RateFlag(ServeDefaults.joinRate)
    @Option(help: "Moderators and admins get this many times each per-user rate.") var staffRateFactor = ServeDefaults.staffRateFactor
    @Option(help: "REGISTERs and FORGOTs per client address, together, IPv6 per /64 (COUNT/SECONDS or off).") var registerRate = RateFlag(ServeDefaults.registerRate)
    @Option(help: "Failed LOGINs from one client address (IPv6: /64) before back-off starts.") var loginAddressFailures = ServeDefaults.loginAddressFailures
    @Option(help: "Failed LOGINs for one account before back-off starts; addresses with no failures may still try.")
    var loginAccountFailures = ServeDefaults.loginAccountFailures
    @Option(help: "Longest login back-off in seconds (it doubles from 1 s).") var loginMaxBackoff = ServeDefaults.loginMaxBackoff
    @Option(help: "Password checks that may wait for a hashing thread; beyond, ERR UNAVAILABLE.") var passwordQueue = ServeDefaults.passwordQueue
    @Option(help: "Threads hashing passwords (argon2id, about 64 MiB each while hashing).") var passwordThreads = 2
    @Option(help: "Event-loop threads serving the TCP port's connections (default: one per core).")
    var ioThreads: Int?
    @Option(help: .hidden) var reportsPerHour: Int?
    @Option(help: "Seconds a ban from RESOLVE … ban lasts when no DURATION is given (default 7 days).")
    var defaultBanSeconds = ServeDefaults.defaultBanSeconds
    @Option(help: "Seconds an account must have existed when it reports for its report to count toward hiding (0: any account's; default 24 hours).")
    var reportMinAccountAge = ServeDefaults.reportMinAccountAge
    @Option(help: "Stops one hunt may hold (ADDSTOP beyond it: CONFLICT).") var maxStopsPerHunt = ServeDefaults.maxStopsPerHunt
    @Option(help: "Teams one team hunt may hold (JOIN … TEAM making one more: CONFLICT).") var maxTeamsPerHunt = ServeDefaults.maxTeamsPerHunt
    @Option(help: "JOINs by a code that finds no hunt, per client address (COUNT/SECONDS or off); beyond, every JOIN by code waits.")
    var joinFailureRate = RateFlag(ServeDefaults.joinFailureRate)
    @Option(help: "Seconds a write's REQUEST key holds its result (default 24 hours): a retry with the key within it gets the same answer. Give `expire` the same --request-key-seconds.")
    var requestKeySeconds = ServeDefaults.requestKeySeconds
    @Option(help: "Seconds a SIGTERM first drains for: /healthz answers 503 (a load balancer stops sending) while the daemon still serves, then it stops as on SIGINT. 0 (the default): it stops at once.")
    var drainSeconds = 0
    @Option(help: "Wrong codes one player may enter at one code stop within --code-guess-window before its CHECKINs are RATE_LIMITED.")
    var codeGuesses = ServeDefaults.codeGuesses
    @Option(help: "Seconds wrong codes are counted in (default 10 minutes); check-ins refused as too far are counted in it too.")
    var codeGuessWindow = ServeDefaults.codeGuessWindow
    @Option(help: "Check-ins one player may make too far from one stop (TOO_FAR) within --code-guess-window before its CHECKINs are RATE_LIMITED.")
    var tooFarTries = ServeDefaults.tooFarTries
    @Option(help: "A check-in farther than this many metres from the player's previous one is checked for travel speed.")
    var travelCheckMeters = ServeDefaults.travelCheckMeters
    @Option(help: "Travel speed in km/h above which such a check-in is flagged for review.")
    var maxTravelSpeed = ServeDefaults.maxTravelSpeedKmh
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel = "info"
    @OptionGroup var mail: MailOptions

    func validate() throws {
        guard (0 ... 65535).contains(port) else { throw ArgumentParser.ValidationError("--port must be within 0…65535") }
        try validateTLS()
        try validateHTTPTLS()
        guard httpPort.map({ (0 ... 65535).contains($0) && ($0 != port || $0 == 0) }) ?? true else {
            throw ArgumentParser.ValidationError("--http-port must be within 0…65535 and differ from --port")
        }
        guard maxLineBytes >= 1024 else { throw ArgumentParser.ValidationError("--max-line-bytes must be at least 1024") }
        guard maxStopsPerHunt >= 1 else { throw ArgumentParser.ValidationError("--max-stops-per-hunt must be at least 1") }
        guard maxTeamsPerHunt >= 1 else { throw ArgumentParser.ValidationError("--max-teams-per-hunt must be at least 1") }
        guard requestKeySeconds >= 1 else { throw ArgumentParser.ValidationError("--request-key-seconds must be at least 1") }
        guard codeGuesses >= 1, codeGuessWindow >= 1 else {
            throw ArgumentParser.ValidationError("--code-guesses and --code-guess-window must be at least 1")
        }
        guard tooFarTries >= 1 else { throw ArgumentParser.ValidationError("--too-far-tries must be at least 1") }
        guard (0 ... 3600).contains(drainSeconds) else { throw ArgumentParser.ValidationError("--drain-seconds must be within 0…3600") }
        guard travelCheckMeters >= 0, travelCheckMeters.isFinite else {
            throw ArgumentParser.ValidationError("--travel-check-meters must be a number of metres, at least 0")
        }
        guard maxTravelSpeed > 0, maxTravelSpeed.isFinite else { throw ArgumentParser.ValidationError("--max-travel-speed must be above 0") }
        guard (1024 ... 64 * 1024).contains(maxHttpHeaderBytes) else {
            throw ArgumentParser.ValidationError("--max-http-header-bytes must be within 1024…65536")
        }
        guard (256 ... maxHttpHeaderBytes).contains(maxHttpRequestLineBytes) else {
            throw ArgumentParser.ValidationError("--max-http-request-line-bytes must be within 256…--max-http-header-bytes")
        }
        if let origins = try parsedOrigins(), origins.isEmpty {
            throw ArgumentParser.ValidationError("--allowed-origins needs at least one origin")
        }
        _ = try parsedTrustedProxies()
        guard maxConnections >= 1 else { throw ArgumentParser.ValidationError("--max-connections must be at least 1") }
        guard ioThreads.map({ (1 ... 256).contains($0) }) ?? true else {
            throw ArgumentParser.ValidationError("--io-threads must be within 1…256")
        }
        guard maxConnectionsPerAddress >= 1 else {
            throw ArgumentParser.ValidationError("--max-connections-per-address must be at least 1")
        }
        guard idleTimeout >= 0 else { throw ArgumentParser.ValidationError("--idle-timeout must be 0 or more") }
        guard lineTimeout >= 0 else { throw ArgumentParser.ValidationError("--line-timeout must be 0 or more") }
        guard outputBufferBytes >= 1024 else { throw ArgumentParser.ValidationError("--output-buffer-bytes must be at least 1024") }
        guard (1 ... 256).contains(databaseConnections) else {
            throw ArgumentParser.ValidationError("--database-connections must be within 1…256")
        }
        guard databaseTimeout >= 1 else { throw ArgumentParser.ValidationError("--database-timeout must be at least 1") }
        guard (1 ... databaseConnections).contains(pinWriters) else {
            throw ArgumentParser.ValidationError("--pin-writers must be within 1…--database-connections")
        }
        guard (0 ... databaseConnections).contains(checkInWriters) else {
            throw ArgumentParser.ValidationError("--check-in-writers must be within 0…--database-connections")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ArgumentParser.ValidationError("unknown --log-level \(logLevel)") }
        guard maxTtl >= 1, (1 ... maxTtl).contains(defaultTtl) else {
            throw ArgumentParser.ValidationError("--default-ttl must be within 1…--max-ttl")
        }
        guard maxRadius > 0, maxRadius <= 20_000_000 else {
            throw ArgumentParser.ValidationError("--max-radius must be within (0, 20000000] metres")
        }
        guard maxWatchesPerConnection >= 1, maxEventBytes >= 1024 else {
            throw ArgumentParser.ValidationError("--max-watches-per-connection must be at least 1 and --max-event-bytes at least 1024")
        }
        guard reportThreshold >= 1, claimSeconds >= 1, defaultBanSeconds >= 1 else {
            throw ArgumentParser.ValidationError("--report-threshold, --claim-seconds and --default-ban-seconds must be at least 1")
        }
        guard reportsPerHour.map({ $0 >= 1 }) ?? true else {
            throw ArgumentParser.ValidationError("--reports-per-hour (replaced by --report-rate) must be at least 1")
        }
        guard (1 ... 1000).contains(staffRateFactor) else { throw ArgumentParser.ValidationError("--staff-rate-factor must be within 1…1000") }
        guard loginAddressFailures >= 1, loginAccountFailures >= 1 else {
            throw ArgumentParser.ValidationError("--login-address-failures and --login-account-failures must be at least 1")
        }
        guard (1 ... 86400).contains(loginMaxBackoff) else { throw ArgumentParser.ValidationError("--login-max-backoff must be within 1…86400") }
        guard passwordQueue >= 0 else { throw ArgumentParser.ValidationError("--password-queue must be 0 or more") }
        guard (1 ... 64).contains(passwordThreads) else { throw ArgumentParser.ValidationError("--password-threads must be within 1…64") }
        guard (0 ... 10 * 365 * 24 * 3600).contains(reportMinAccountAge) else {
            throw ArgumentParser.ValidationError("--report-min-account-age must be within 0…315360000 seconds (10 years)")
        }
        guard sessionTtl >= 60 else { throw ArgumentParser.ValidationError("--session-ttl must be at least 60 seconds") }
        guard maxPhotoBytes >= 1 else { throw ArgumentParser.ValidationError("--max-photo-bytes must be at least 1") }
        // A photo travels base64-encoded on one line: the line must have room for the largest.
        let photoLine = (maxPhotoBytes + 2) / 3 * 4 + 4096
        guard maxLineBytes >= photoLine else {
            throw ArgumentParser.ValidationError("--max-line-bytes must be at least \(photoLine) to carry a photo of --max-photo-bytes")
        }
    }

    /// TLS takes --tls-port, --tls-cert and --tls-key together (and --tls-host only with them).
    /// `--allowed-origins` as a set of origins (`scheme://host[:port]`), or nil for any.
    func parsedOrigins() throws -> Set<String>? {
        guard let allowedOrigins else { return nil }
        var origins = Set<String>()
        for part in allowedOrigins.split(separator: ",") {
            let origin = part.trimmingCharacters(in: .whitespaces)
            guard origin.hasPrefix("http://") || origin.hasPrefix("https://"), !origin.hasSuffix("/") else {
                throw ArgumentParser.ValidationError(
                    "--allowed-origins takes origins like https://app.example.org (scheme and host, no path), got \(origin)")
            }
            origins.insert(origin)
        }
        return origins
    }

    /// `--trusted-proxies` as networks; none without it.
    func parsedTrustedProxies() throws -> TrustedProxies {
        guard let trustedProxies else { return .none }
        do {
            return try TrustedProxies(parsing: trustedProxies)
        } catch {
            throw ArgumentParser.ValidationError("\(error)")
        }
    }

    func validateTLS() throws {
        let given = [tlsPort != nil, tlsCert != nil, tlsKey != nil]
        guard given.allSatisfy({ $0 }) || !given.contains(true) else {
            throw ArgumentParser.ValidationError("--tls-port, --tls-cert and --tls-key go together: give all three or none")
        }
        guard let tlsPort else {
            guard tlsHost == nil else { throw ArgumentParser.ValidationError("--tls-host needs --tls-port, --tls-cert and --tls-key") }
            return
        }
        guard (0 ... 65535).contains(tlsPort) else { throw ArgumentParser.ValidationError("--tls-port must be within 0…65535") }
        guard tlsPort != port || port == 0 || (tlsHost ?? host) != host else {
            throw ArgumentParser.ValidationError("--tls-port must differ from --port")
        }
    }

    /// HTTPS takes --http-tls-cert and --http-tls-key together, on an --http-port.
    func validateHTTPTLS() throws {
        guard (httpTlsCert == nil) == (httpTlsKey == nil) else {
            throw ArgumentParser.ValidationError("--http-tls-cert and --http-tls-key go together: give both or neither")
        }
        guard httpTlsCert == nil || httpPort != nil else {
            throw ArgumentParser.ValidationError("--http-tls-cert and --http-tls-key need --http-port (the port they make HTTPS)")
        }
    }

    /// The HTTP port's certificate, read from the PEM files; nil without --http-tls-cert. An error
    /// names the flag and the file at fault.
    func httpCertificate() throws -> ServerCertificate? {
        guard let httpTlsCert, let httpTlsKey else { return nil }
        do {
            return try ServerCertificate(certificateChainFile: httpTlsCert, privateKeyFile: httpTlsKey)
        } catch {
            throw CLIError("HTTPS (--http-tls-cert, --http-tls-key): \(error)")
        }
    }

    /// The TLS listener's settings, read from the PEM files; nil without --tls-port.
    func tlsSettings() throws -> TLSSettings? {
        guard let tlsPort, let tlsCert, let tlsKey else { return nil }
        return try TLSSettings(host: tlsHost, port: tlsPort, certificateChainFile: tlsCert, privateKeyFile: tlsKey)
    }

    /// The standby the start-up loads read from (`--read-database-url`), with a small pool of its own.
    func standbyReads(commandTimeout: Duration?) -> StandbyReads? {
        guard let url = readDatabaseUrl ?? ProcessInfo.processInfo.environment["READ_DATABASE_URL"], !url.isEmpty else { return nil }
        var configuration = PostgresConfiguration(connectionString: url, applicationName: "scavengerd-loads", commandTimeout: commandTimeout)
        configuration.targetSessionAttributes = "prefer-standby"
        return StandbyReads(standby: Database(pool: PostgresPool(configuration: configuration, maxConnections: 2)))
    }

    func run() async throws {
        try await reportingFailure {
            // Before anything waits on the database: a bad certificate or key fails at once.
            let tls = try tlsSettings()
            let httpCertificate = try self.httpCertificate()
            let smtp = try mail.smtpConfiguration()
            let level = Logger.Level(rawValue: logLevel) ?? .info
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            let logger = Logger(label: "scavengerd")
            var databaseConfiguration = try database.configuration()
            databaseConfiguration.commandTimeout = .seconds(databaseTimeout)
            let pool = PostgresPool(configuration: databaseConfiguration, maxConnections: databaseConnections)
            // With an HTTP port, the daemon keeps metrics (for /metrics): requests counted and
            // timed in the one table both front ends share, and the store's group sizes.
            let metrics = httpPort.map { _ in DaemonMetrics.bootstrap() }
            let store = Database(pool: pool, pinWriters: pinWriters, checkInWriters: checkInWriters, metrics: metrics?.factory)
            // Served at once: the feed listener loads the feed (retrying while the database is
            // away), and until then what needs the feed answers UNAVAILABLE.
            let feed = Feed(database: store, logger: logger, standbyReads: standbyReads(commandTimeout: databaseConfiguration.commandTimeout))
            // Every connection is a descriptor: make room for them, the database's, and refused
            // connections on their way out, or serve fewer (a client past the descriptor limit
            // would wait in the backlog instead of hearing ERR UNAVAILABLE).
            let fitting = DescriptorLimit.fit(connections: maxConnections, spare: databaseConnections + 128)
            if fitting.connections < maxConnections {
                logger.warning("the open-file limit is too low for --max-connections; serving fewer", metadata: [
                    "max-connections": "\(fitting.connections)", "open-file-limit": "\(fitting.after)",
                ])
            } else if fitting.after > fitting.before {
                logger.info("raised the open-file limit", metadata: ["from": "\(fitting.before)", "to": "\(fitting.after)"])
            }
            let hasher = PasswordHasher(parameters: .interactive, threads: passwordThreads)
            let board = Board(feed: feed, passwords: hasher, rules: BoardRules(
                pins: PinRules(defaultTTLSeconds: defaultTtl, maximumTTLSeconds: maxTtl, maximumPhotoBytes: maxPhotoBytes),
                feed: FeedRules(maximumRadiusMeters: maxRadius, maximumWatchesPerConnection: maxWatchesPerConnection),
                moderation: ModerationRules(
                    hideThreshold: reportThreshold, claimSeconds: claimSeconds, defaultBanSeconds: defaultBanSeconds,
                    minimumReporterAgeSeconds: reportMinAccountAge),
                sessionTTLSeconds: sessionTtl,
                writeRates: WriteRates(
                    post: postRate.limit, photo: photoRate.limit, reply: replyRate.limit,
                    report: reportsPerHour.map { RateLimit(count: $0, seconds: 3600) } ?? reportRate.limit,
                    join: joinRate.limit, staffFactor: staffRateFactor),
                loginThrottle: LoginThrottleRules(
                    addressFreeFailures: loginAddressFailures, accountFreeFailures: loginAccountFailures,
                    maximumBackoffSeconds: loginMaxBackoff),
                registrationRate: registerRate.limit, passwordQueueLength: passwordQueue,
                hunts: HuntRules(
                    maximumStops: maxStopsPerHunt, codeGuesses: codeGuesses, codeGuessWindowSeconds: codeGuessWindow,
                    travelCheckMinimumMeters: travelCheckMeters, maximumTravelSpeedKmh: maxTravelSpeed, tooFarTries: tooFarTries,
                    maximumTeams: maxTeamsPerHunt),
                joinFailureRate: joinFailureRate.limit, requestKeySeconds: requestKeySeconds,
                // From the environment, so that the secret sits in no process list.
                requestKeySecret: ProcessInfo.processInfo.environment["SCAVENGER_REQUEST_KEY_SECRET"],
                recovery: mail.recoveryRules(smtp)), logger: logger)
            // Photos whose sizes a restart (or another daemon) left unmade get them in the background.
            board.resumePhotoSizes()
            let table = metrics.map { CommandTable.standard.measured(by: $0.requestMetrics(for: .standard)) } ?? .standard
            // One count of connections for every port: a client cannot get round the limits by
            // opening its connections on the HTTP port.
            let connectionLimits = ConnectionLimits(maximum: fitting.connections, maximumPerAddress: maxConnectionsPerAddress)
            // The line port's own event loops with --io-threads (shut down with the daemon below),
            // else NIO's process-wide ones.
            let ioGroup = ioThreads.map { MultiThreadedEventLoopGroup(numberOfThreads: $0) }
            let server = ScavengerServer(
                configuration: ServerConfiguration(
                    host: host, port: port, maxConnections: fitting.connections, maxConnectionsPerAddress: maxConnectionsPerAddress,
                    idleTimeoutSeconds: idleTimeout, lineTimeoutSeconds: lineTimeout,
                    outputHighWaterBytes: outputBufferBytes, maxEventBytes: maxEventBytes, limits: ProtocolLimits(maxLineBytes: maxLineBytes), tls: tls,
                    trustedProxies: try parsedTrustedProxies()),
                board: board, table: table,
                group: ioGroup ?? MultiThreadedEventLoopGroup.singleton,
                limits: connectionLimits, logger: logger)
            // Trapped before anything listens: a SIGHUP from then on is a reload, never the end.
            let hangups = await UnixSignalsSequence(trapping: .sighup)
            // With a drain, SIGTERM first makes /healthz answer 503 for --drain-seconds (so a load
            // balancer stops sending), then stops the daemon as SIGINT does.
            let terminations = drainSeconds > 0 ? await UnixSignalsSequence(trapping: .sigterm) : nil
            var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
                .init(service: FeedListener(feed: feed, logger: logger)),
                .init(service: server),
                // It ends only on shutdown; should it end otherwise, the daemon serves on.
                .init(
                    service: ReloadOnHangup(
                        hangups: hangups,
                        certificates: (tls.map { [(port: "--tls-port", certificate: $0.certificate)] } ?? [])
                            + (httpCertificate.map { [(port: "--http-port", certificate: $0)] } ?? []),
                        logger: logger),
                    successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore),
            ]
            if let httpPort, let metrics {
                services.append(.init(service: ScavengerHTTPServer(
                    configuration: HTTPConfiguration(
                        host: host, port: httpPort, maxConnections: fitting.connections,
                        maxConnectionsPerAddress: maxConnectionsPerAddress, limits: ProtocolLimits(maxLineBytes: maxLineBytes),
                        maxEventBytes: maxEventBytes,
                        head: HTTPHeadLimits(maxRequestLineBytes: maxHttpRequestLineBytes, maxHeaderBytes: maxHttpHeaderBytes),
                        headTimeoutSeconds: lineTimeout, idleTimeoutSeconds: idleTimeout, allowedOrigins: try parsedOrigins(),
                        leafletDirectory: leafletDirectory, trustedProxies: try parsedTrustedProxies(),
                        tlsCertificate: httpCertificate),
                    board: board, table: table, metrics: metrics, limits: connectionLimits,
                    logger: logger)))
            }
            if let smtp {
                services.append(.init(service: mail.sender(smtp, store: store, metrics: metrics, logger: logger)))
            }
            if let terminations {
                // Its end (after a SIGTERM and the drain) stops the daemon.
                services.append(.init(
                    service: DrainOnTerminate(terminations: terminations, seconds: drainSeconds, board: board, logger: logger),
                    successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup))
            }
            let group = ServiceGroup(
                configuration: .init(
                    services: services,
                    gracefulShutdownSignals: terminations == nil ? [.sigterm, .sigint] : [.sigint],
                    logger: logger))
            do {
                try await group.run()
            } catch where Self.isAddressInUse(error) {
                await pool.shutdown()
                await hasher.shutdown()
                try? await ioGroup?.shutdownGracefully()
                throw CLIError(await addressInUseMessage())
            }
            await pool.shutdown()
            await hasher.shutdown()
            try? await ioGroup?.shutdownGracefully()
        }
    }

    /// Whether `error` is a listener's bind failing because the address is taken.
    static func isAddressInUse(_ error: any Error) -> Bool {
        if let io = error as? IOError { return io.errnoCode == EADDRINUSE }
        return "\(error)".contains("Address already in use")
    }

    /// Which of the daemon's addresses is taken, in plain words: each is tried again (the
    /// services have stopped, so theirs are free again) and the first that cannot be bound named.
    func addressInUseMessage() async -> String {
        var addresses = [(flag: "--port", host: host, port: port)]
        if let tlsPort { addresses.append(("--tls-port", tlsHost ?? host, tlsPort)) }
        if let httpPort { addresses.append(("--http-port", host, httpPort)) }
        for address in addresses where address.port != 0 {
            do {
                let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                    .bind(host: address.host, port: address.port).get()
                try? await channel.close()
            } catch where Self.isAddressInUse(error) {
                return "cannot listen on \(address.host):\(address.port) (\(address.flag)): the address is already in use, "
                    + "by another scavengerd or another program; stop it or choose another port"
            } catch {
                continue
            }
        }
        return "cannot listen: an address is already in use (--port, --tls-port or --http-port); stop what listens there or choose other ports"
    }
}

/// A per-user or per-address rate on the command line: `COUNT/SECONDS`, or `off`.
struct RateFlag: ExpressibleByArgument, CustomStringConvertible, Sendable {
    /// Nil when off.
    let limit: RateLimit?

    init(_ text: String) {
        self.init(argument: text)!
    }

    init?(argument: String) {
        if argument.lowercased() == "off" {
            limit = nil
        } else if let limit = RateLimit(parsing: argument) {
            self.limit = limit
        } else {
            return nil
        }
    }

    var description: String { limit?.description ?? "off" }
    var defaultValueDescription: String { description }
}
