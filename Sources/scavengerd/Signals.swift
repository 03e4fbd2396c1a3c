import Logging
import ScavengerBoard
import ScavengerTLS
import ServiceLifecycle
import UnixSignals

/// `--drain-seconds`: on SIGTERM the daemon drains (its health is 503 "draining", it still serves)
/// for that long, then this service ends, which stops the daemon as SIGINT does (a SIGINT during
/// the drain stops it at once).
struct DrainOnTerminate: Service {
    let terminations: UnixSignalsSequence
    let seconds: Int
    let board: Board
    let logger: Logger

    func run() async throws {
        for await _ in terminations.cancelOnGracefulShutdown() {
            board.beginDraining()
            logger.notice("SIGTERM: draining (health answers 503) before stopping", metadata: ["drain-seconds": "\(seconds)"])
            // A SIGINT meanwhile stops the daemon at once.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(seconds)) }
            logger.notice("drained: stopping")
            return
        }
    }
}

/// SIGHUP (`systemctl reload scavengerd`): reads each TLS listener's PEM files again
/// (`--tls-cert` and `--tls-key`, `--http-tls-cert` and `--http-tls-key`) and serves the
/// connections that port accepts from then on with them, so that a renewed certificate takes
/// effect without a restart (connections already open keep theirs). Files that cannot be read,
/// or a key that does not fit, leave that port's certificate as it was, and say why in the log.
/// Without TLS there is nothing to reload: it says so, and the daemon goes on (SIGHUP's default,
/// ending the process, would make a `reload` a crash).
struct ReloadOnHangup: Service {
    let hangups: UnixSignalsSequence
    /// Each TLS listener's certificate, by the flag of its port (`--tls-port`, `--http-port`).
    let certificates: [(port: String, certificate: ServerCertificate)]
    let logger: Logger

    func run() async throws {
        for await _ in hangups.cancelOnGracefulShutdown() {
            guard !certificates.isEmpty else {
                logger.notice("SIGHUP: nothing to reload (no TLS listener); the other settings take a restart")
                continue
            }
            for (port, certificate) in certificates {
                let files: Logger.Metadata = certificate.files.map { ["tls-cert": "\($0.certificateChain)", "tls-key": "\($0.privateKey)"] } ?? [:]
                do {
                    try certificate.reload()
                    logger.notice("SIGHUP: reloaded the TLS certificate and key for \(port); new connections there use them", metadata: files)
                } catch {
                    logger.error("SIGHUP: kept the TLS certificate in use for \(port), the files could not be loaded: \(error)")
                }
            }
        }
    }
}
