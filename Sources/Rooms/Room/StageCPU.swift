import Synchronization

/// The CPU time a room's canvas spent in the last whole second, by stage: compositing the tiles, encoding the
/// programme (x264), and making the room view (scaled and encoded for the participants). Added to on the canvas
/// queue, read by the metrics: behind a mutex, two adds a canvas.
public final class StageCPU: Sendable {
    public struct Second: Sendable, Equatable {
        public var compositeMs = 0.0
        public var encodeMs = 0.0
        public var viewMs = 0.0
    }

    private struct State {
        var current = (composite: Int64(0), encode: Int64(0), view: Int64(0))
        var secondStartMs: Int64?
        var last = Second()
    }

    private let state = Mutex(State())

    public init() {}

    /// The last whole second's figures; zero once the canvas has not run for two seconds (an idle room composes
    /// nothing).
    public func lastSecond(nowMs: Int64) -> Second {
        state.withLock { s in
            guard let start = s.secondStartMs, nowMs - start <= 2000 else { return Second() }
            return s.last
        }
    }

    func add(compositeMicros: Int64, encodeMicros: Int64, viewMicros: Int64, nowMs: Int64) {
        state.withLock { s in
            let start = s.secondStartMs ?? nowMs
            if nowMs - start >= 1000 {
                let scale = 1000.0 / Double(nowMs - start) / 1000
                s.last = Second(
                    compositeMs: Double(s.current.composite) * scale, encodeMs: Double(s.current.encode) * scale,
                    viewMs: Double(s.current.view) * scale)
                s.current = (0, 0, 0)
                s.secondStartMs = nowMs
            } else {
                s.secondStartMs = start
            }
            s.current.composite += compositeMicros
            s.current.encode += encodeMicros
            s.current.view += viewMicros
        }
    }
}
