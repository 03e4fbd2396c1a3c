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
        get { current.value.withLock { $0 } }
        set { current = Current(newValue) }
    }
    /// Shared by every copy of these settings, so that a replacement reaches the listener's.
    private var current: Current
    /// Seconds a client has to finish the TLS handshake once connected; 0 never. Default 10.
    public var handshakeTimeoutSeconds: Int

    /// Listens with a ready context (whose configuration should come from
    /// ``serverConfiguration(certificateChain:privateKey:)`` or be at least as strict).
    public init(host: String? = nil, port: Int, context: NIOSSLContext, handshakeTimeoutSeconds: Int = 10) {
        self.host = host
        self.port = port
        self.current = Current(context)
        self.handshakeTimeoutSeconds = handshakeTimeoutSeconds
    }

    /// Listens with this certificate chain (the server's own certificate first) and its private key.
    /// Throws if the key does not match the certificate.
    public init(
        host: String? = nil, port: Int, certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey,
        handshakeTimeoutSeconds: Int = 10
    ) throws {
        let configuration = Self.serverConfiguration(certificateChain: certificateChain, privateKey: privateKey)
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw TLSSettingsError("the TLS private key does not fit the certificate, or one of them is unusable (\(error))")
        }
        self.init(host: host, port: port, context: context, handshakeTimeoutSeconds: handshakeTimeoutSeconds)
    }

    /// Listens with the certificate chain and private key in these PEM files (as certbot writes
    /// them: `fullchain.pem` and `privkey.pem`). Reads the files now, so do not call it on an
    /// event loop. Throws a ``TLSSettingsError`` that names the file at fault.
    public init(
        host: String? = nil, port: Int, certificateChainFile: String, privateKeyFile: String,
        handshakeTimeoutSeconds: Int = 10
    ) throws {
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
        try self.init(
            host: host, port: port, certificateChain: chain, privateKey: key, handshakeTimeoutSeconds: handshakeTimeoutSeconds)
    }

    /// Serves the TLS connections accepted from now on with `context` (a renewed certificate);
    /// connections already open keep the one they were served with. Every copy of these
    /// settings sees the change, the listener's included.
    public func replaceContext(_ context: NIOSSLContext) {
        current.value.withLock { $0 = context }
    }

    /// The context in use, behind a lock: the listener reads it for each connection.
    private final class Current: Sendable {
        let value: Mutex<NIOSSLContext>
        init(_ context: NIOSSLContext) { value = Mutex(context) }
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

/// Why TLS settings could not be made; the description is one line fit for an operator.
public struct TLSSettingsError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
