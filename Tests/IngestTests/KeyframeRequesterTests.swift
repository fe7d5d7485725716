import Testing
@testable import Ingest

@Suite struct KeyframeRequesterTests {
    @Test func atMostOneRequestPer500Milliseconds() {
        var k = KeyframeRequester()
        #expect(k.minIntervalMs == 500)
        #expect(k.request(reason: .join, nowMs: 1000) == true)
        #expect(k.request(reason: .join, nowMs: 1000) == false)
        #expect(k.request(reason: .decodeError, nowMs: 1499) == false)
        #expect(k.request(reason: .decodeError, nowMs: 1500) == true)
        #expect(k.request(reason: .unrecoverableLoss, nowMs: 1999) == false)
        #expect(k.request(reason: .unrecoverableLoss, nowMs: 2000) == true)
        #expect(k.sent == 3)
        #expect(k.suppressed == 3)
        #expect(k.lastSentMs == 2000)
        #expect(k.lastReason == .unrecoverableLoss)
    }

    @Test func suppressedRequestDoesNotRestartTheInterval() {
        var k = KeyframeRequester()
        #expect(k.request(reason: .join, nowMs: 0) == true)
        #expect(k.request(reason: .decodeError, nowMs: 400) == false)
        #expect(k.request(reason: .decodeError, nowMs: 500) == true)  // 500 after the last sent, not 100 after 400
        #expect(k.lastReason == .decodeError)
    }

    @Test func clockGoingBackwardsIsThrottledToo() {
        var k = KeyframeRequester()
        #expect(k.request(reason: .join, nowMs: 10_000) == true)
        #expect(k.request(reason: .join, nowMs: 9_000) == false)
        #expect(k.lastSentMs == 10_000)
    }

    @Test func intervalIsConfigurableAndNeverNegative() {
        var k = KeyframeRequester(minIntervalMs: 1000)
        #expect(k.request(reason: .join, nowMs: 0) == true)
        #expect(k.request(reason: .join, nowMs: 999) == false)
        #expect(k.request(reason: .join, nowMs: 1000) == true)
        var unthrottled = KeyframeRequester(minIntervalMs: -1)
        #expect(unthrottled.minIntervalMs == 0)
        #expect(unthrottled.request(reason: .join, nowMs: 0) == true)
        #expect(unthrottled.request(reason: .join, nowMs: 0) == true)
        #expect(
            KeyframeRequester.Reason.allCases.map(\.rawValue) == [
                "join", "decodeError", "unrecoverableLoss", "decodeResumed",
            ])
    }
}
