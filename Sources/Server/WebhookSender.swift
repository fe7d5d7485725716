import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Publishing
import Rooms

/// One webhook POST over URLSession: the signed headers, the body, and whether a 2xx came back.
/// Everything about when and whether to try again lives in `WebhookQueue`.
struct WebhookSender: Sendable {
    enum Result: Sendable, CustomStringConvertible {
        case status(Int)
        case transportError(String)

        var isSuccess: Bool { if case let .status(code) = self { (200...299).contains(code) } else { false } }

        var description: String {
            switch self {
            case let .status(code): "HTTP \(code)"
            case let .transportError(message): message
            }
        }
    }

    let session: URLSession
    let destinations: DestinationPolicy

    init(timeoutSeconds: Double, destinations: DestinationPolicy) {
        self.destinations = destinations
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeoutSeconds
        configuration.timeoutIntervalForResource = timeoutSeconds
        // Receivers answer with a status; nothing is worth caching or storing.
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        // A receiver's redirect is its answer (a failure), never followed elsewhere with the signed event.
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    /// The headers of a delivery, as protocol/webhooks.md lists them.
    static func headers(for delivery: WebhookDelivery, secret: String) -> [String: String] {
        [
            "Content-Type": "application/json",
            WebhookSignature.header: WebhookSignature.sign(delivery.body, secret: secret),
            "X-Cohost-Event-Id": delivery.id,
            "X-Cohost-Attempt": "\(delivery.attempts)",
            "User-Agent": "cohost-webhook",
        ]
    }

    func send(_ delivery: WebhookDelivery, to url: URL, secret: String) async -> Result {
        if let refusal = await Self.refusal(of: url, destinations) { return .transportError(refusal) }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        for (name, value) in Self.headers(for: delivery, secret: secret) {
            request.setValue(value, forHTTPHeaderField: name)
        }
        request.httpBody = Data(delivery.body)
        return await withCheckedContinuation { continuation in
            session.dataTask(with: request) { _, response, error in
                if let error {
                    continuation.resume(returning: .transportError(error.localizedDescription))
                } else if let http = response as? HTTPURLResponse {
                    continuation.resume(returning: .status(http.statusCode))
                } else {
                    continuation.resume(returning: .transportError("no HTTP response"))
                }
            }.resume()
        }
    }

    /// Why `url`'s host may not be posted to now: resolved at each attempt and every address checked (a name moved
    /// into a refused network since the last one is refused at this one). The lookup blocks, so off the pool.
    static func refusal(of url: URL, _ destinations: DestinationPolicy) async -> String? {
        guard let host = url.host, !host.isEmpty else { return "the URL has no host" }
        return await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            DispatchQueue.global().async {
                do {
                    let addresses = try HostResolver.addresses(of: host)
                    continuation.resume(returning: destinations.refusal(host: host, addresses: addresses))
                } catch {
                    continuation.resume(returning: "\(error)")
                }
            }
        }
    }
}
