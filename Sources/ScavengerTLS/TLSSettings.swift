import NIOSSL
import Synchronization

/// A second listener that speaks the same line protocol inside TLS 1.2 or later.
public struct TLSSettings: Sendable {
    /// Address to listen on with TLS; nil listens on the plain listener's `host`. Default nil.
    public var host: String?
    /// Port to listen on with TLS. 0 picks a free port.
    public var port: Int
    /// The server's certificate chain and private key, and the protocol versions it accepts: what
    /// each new TLS connection is served with (see ``replaceContext(_:)``).
    public var context: NIOSSLContext {
        get { certificate.context }
        set { certificate = ServerCertificate(context: newValue) }
    }
    /// What each new connection is served with, shared by every copy of these settings so that a
    /// replacement or a reload reaches the listener's.
    public private(set) var certificate: ServerCertificate
    /// Seconds a client has to finish the TLS handshake once connected; 0 never. Default 10.
    public var handshakeTimeoutSeconds: Int

    /// Listens with a ready context (whose configuration should come from
    /// ``serverConfiguration(certificateChain:privateKey:)`` or be at least as strict).
    public init(host: String? = nil, port: Int, context: NIOSSLContext, handshakeTimeoutSeconds: Int = 10) {
        self.init(host: host, port: port, certificate: ServerCertificate(context: context), handshakeTimeoutSeconds: handshakeTimeoutSeconds)
    }

    /// Listens with this certificate (which ``ServerCertificate/reload()`` may renew).
    public init(host: String? = nil, port: Int, certificate: ServerCertificate, handshakeTimeoutSeconds: Int = 10) {
        self.host = host
        self.port = port
        self.certificate = certificate
        self.handshakeTimeoutSeconds = handshakeTimeoutSeconds
    }

    /// Listens with this certificate chain (the server's own certificate first) and its private key.
    /// Throws if the key does not match the certificate.
    public init(
        host: String? = nil, port: Int, certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey,
        handshakeTimeoutSeconds: Int = 10
    ) throws {
        let context = try ServerCertificate.context(certificateChain: certificateChain, privateKey: privateKey)
        self.init(host: host, port: port, context: context, handshakeTimeoutSeconds: handshakeTimeoutSeconds)
    }

    /// Listens with the certificate chain and private key in these PEM files (as certbot writes
    /// them: `fullchain.pem` and `privkey.pem`). Reads the files now, so do not call it on an
    /// event loop. Throws a ``TLSSettingsError`` that names the file at fault.
    public init(
        host: String? = nil, port: Int, certificateChainFile: String, privateKeyFile: String,
        handshakeTimeoutSeconds: Int = 10
    ) throws {
        let certificate = try ServerCertificate(certificateChainFile: certificateChainFile, privateKeyFile: privateKeyFile)
        self.init(host: host, port: port, certificate: certificate, handshakeTimeoutSeconds: handshakeTimeoutSeconds)
    }

    /// Serves the TLS connections accepted from now on with `context` (a renewed certificate);
    /// connections already open keep the one they were served with. Every copy of these
    /// settings sees the change, the listener's included.
    public func replaceContext(_ context: NIOSSLContext) {
        certificate.replace(with: context)
    }

    /// The server side's TLS configuration: this chain and key, TLS 1.2 at the least, and no client
    /// certificate asked for.
    public static func serverConfiguration(certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: certificateChain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }
}

/// The certificate and key a TLS listener serves each new connection with, behind a lock: a
/// listener reads ``context`` as it accepts a connection, so replacing it (a renewed certificate,
/// SIGHUP) changes what new connections get while open ones keep theirs.
public final class ServerCertificate: Sendable {
    /// The PEM files it was read from, which ``reload()`` reads again; nil when made from a context.
    public let files: (certificateChain: String, privateKey: String)?
    private let current: Mutex<NIOSSLContext>

    /// Serves `context` (it cannot be reloaded from files).
    public init(context: NIOSSLContext) {
        files = nil
        current = Mutex(context)
    }

    /// Serves the certificate chain and private key in these PEM files, read now (do not call it on
    /// an event loop). Throws a ``TLSSettingsError`` that names the file at fault.
    public init(certificateChainFile: String, privateKeyFile: String) throws {
        let context = try Self.context(certificateChainFile: certificateChainFile, privateKeyFile: privateKeyFile)
        files = (certificateChainFile, privateKeyFile)
        current = Mutex(context)
    }

    /// What a connection accepted now is served with.
    public var context: NIOSSLContext { current.withLock { $0 } }

    /// Serves the connections accepted from now on with `context`.
    public func replace(with context: NIOSSLContext) {
        current.withLock { $0 = context }
    }

    /// Reads the PEM files again and serves new connections with what they hold now. Files that
    /// cannot be read, or a key that does not fit, leave the context in use as it was and throw a
    /// ``TLSSettingsError`` naming the file at fault. Blocks on the files: not on an event loop.
    public func reload() throws {
        guard let files else { throw TLSSettingsError("the TLS certificate was not read from files: nothing to reload") }
        replace(with: try Self.context(certificateChainFile: files.certificateChain, privateKeyFile: files.privateKey))
    }

    /// A server context for the certificate chain and key in these PEM files (``TLSSettings/serverConfiguration(certificateChain:privateKey:)``).
    public static func context(certificateChainFile: String, privateKeyFile: String) throws -> NIOSSLContext {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateChainFile)
        } catch {
            throw TLSSettingsError("cannot read a PEM certificate chain from \(certificateChainFile) (\(error))")
        }
        guard !chain.isEmpty else {
            throw TLSSettingsError("no PEM certificate in \(certificateChainFile)")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)
        } catch {
            throw TLSSettingsError("cannot read a PEM private key from \(privateKeyFile) (\(error))")
        }
        do {
            return try context(certificateChain: chain, privateKey: key)
        } catch let error as TLSSettingsError {
            throw TLSSettingsError("\(error.description): \(privateKeyFile) does not go with \(certificateChainFile)")
        }
    }

    /// A server context for this chain and key; throws if the key does not match the certificate.
    public static func context(certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey) throws -> NIOSSLContext {
        let configuration = TLSSettings.serverConfiguration(certificateChain: certificateChain, privateKey: privateKey)
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw TLSSettingsError("the TLS private key does not fit the certificate, or one of them is unusable (\(error))")
        }
    }
}

/// Why TLS settings could not be made; the description is one line fit for an operator.
public struct TLSSettingsError: Error, CustomStringConvertible {
    /// The reason, naming the file at fault when there is one.
    public let description: String
    init(_ description: String) { self.description = description }
}
