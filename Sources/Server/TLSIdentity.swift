import Foundation
import Logging
import NIOSSL
import Synchronization

/// The HTTPS certificate chain and key, from PEM files, read again on SIGHUP (a renewed certificate takes effect
/// for new connections without a restart). A reload that fails keeps the identity in use and says why.
public final class TLSIdentity: Sendable {
    public let certificatePath: String
    public let keyPath: String
    private let current: Mutex<(chain: [NIOSSLCertificate], key: NIOSSLPrivateKey)>

    /// Reads both files; throws a message naming the file that could not be used.
    public init(certificatePath: String, keyPath: String) throws {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        current = Mutex(try Self.read(certificatePath: certificatePath, keyPath: keyPath))
    }

    /// Reads the files again; on failure the previous identity stays.
    public func reload() throws {
        let fresh = try Self.read(certificatePath: certificatePath, keyPath: keyPath)
        current.withLock { $0 = fresh }
    }

    /// The server configuration: each handshake takes the identity current at that moment.
    var configuration: TLSConfiguration {
        let (chain, key) = current.withLock { $0 }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        // TLS 1.0 and 1.1 are deprecated (RFC 8996); every browser and client Cohost serves speaks 1.2 or 1.3.
        configuration.minimumTLSVersion = .tlsv12
        configuration.sslContextCallback = { [self] _, promise in
            let (chain, key) = current.withLock { $0 }
            var override = NIOSSLContextConfigurationOverride()
            override.certificateChain = chain.map { .certificate($0) }
            override.privateKey = .privateKey(key)
            promise.succeed(override)
        }
        return configuration
    }

    private static func read(
        certificatePath: String, keyPath: String
    ) throws -> (chain: [NIOSSLCertificate], key: NIOSSLPrivateKey) {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificatePath) } catch {
            throw TLSIdentityError("tls_cert '\(certificatePath)': \(error)")
        }
        guard !chain.isEmpty else { throw TLSIdentityError("tls_cert '\(certificatePath)' holds no certificate") }
        do { return (chain, try NIOSSLPrivateKey(file: keyPath, format: .pem)) } catch {
            throw TLSIdentityError("tls_key '\(keyPath)': \(error)")
        }
    }

    /// Reloads on each SIGHUP, logging the outcome; the returned source must be kept alive.
    public func reloadOnHangup(logger: Logger) -> DispatchSourceSignal {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: DispatchQueue(label: "cohost.tls-reload"))
        source.setEventHandler { [self] in
            do {
                try reload()
                logger.info("TLS certificate reloaded", metadata: ["cert": "\(certificatePath)"])
            } catch {
                logger.error("TLS certificate reload failed; the old one stays", metadata: ["error": "\(error)"])
            }
        }
        source.resume()
        return source
    }
}

public struct TLSIdentityError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
