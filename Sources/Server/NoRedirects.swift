import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A URLSession delegate that follows no redirect: the 3xx comes back as the answer. Cohost's outgoing calls (the
/// cluster proxy's, webhooks) go where they were configured to and nowhere an answer points, so neither a token nor
/// a signed event is carried to an address nobody chose.
final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) { completionHandler(nil) }
}
