import Foundation

/// Polls `condition` every `every` until it holds or `seconds` pass; returns whether it held. For state another
/// thread or process changes (a room parking, a webhook arriving, an output connecting), never as a fixed sleep.
@discardableResult
public func eventually(
    seconds: Double = 5, every: Duration = .milliseconds(10),
    _ condition: () -> Bool
) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: every)
    }
    return condition()
}
