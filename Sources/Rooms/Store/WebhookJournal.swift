import Foundation

/// Where webhook deliveries not yet acknowledged outlive the process: written when an event is queued for a URL,
/// removed once the receiver answered 2xx or the delivery was given up. At start the dispatcher queues every one
/// again under its own event id, so a receiver that already had it can tell (at least once). Implemented by the
/// room stores; calls come from one serial queue of the dispatcher.
public protocol WebhookJournal: Sendable {
    func recordDelivery(_ delivery: JournaledDelivery) throws(StoreError)
    func removeDelivery(url: String, id: String) throws(StoreError)
    /// This server's pending deliveries, oldest first.
    func pendingDeliveries() throws(StoreError) -> [JournaledDelivery]
}

public struct JournaledDelivery: Sendable, Equatable {
    /// The receiver's URL as configured.
    public var url: String
    /// The event id (`X-Cohost-Event-Id`), the same on every attempt.
    public var id: String
    public var body: [UInt8]
    public init(url: String, id: String, body: [UInt8]) {
        self.url = url
        self.id = id
        self.body = body
    }
}
