/// Which of a receiver's slots are sent within what the receiver says it can take (its REMB): slots in order, each
/// costing its source's current bitrate. A slot being sent stays on while it fits; a paused one comes back only
/// when it fits with 15 % to spare, so a receiver near its limit does not flap. Pure.
public enum SlotBudget {
    /// `estimateBps` nil: no estimate yet, every slot is sent. `demandBps[i]`: what slot i's source sends now;
    /// `sending[i]`: whether slot i is sent now.
    public static func admit(estimateBps: Int?, demandBps: [Int], sending: [Bool]) -> [Bool] {
        var verdicts: [Bool] = []
        admit(estimateBps: estimateBps, demandBps: demandBps, sending: sending, into: &verdicts)
        return verdicts
    }

    /// The same, into `verdicts` (emptied first, its capacity kept: a caller reusing it allocates nothing).
    public static func admit(estimateBps: Int?, demandBps: [Int], sending: [Bool], into verdicts: inout [Bool]) {
        verdicts.removeAll(keepingCapacity: true)
        var left = estimateBps ?? .max
        for i in demandBps.indices {
            let demand = demandBps[i]
            let was = i < sending.count && sending[i]
            let fits = estimateBps == nil || (was ? demand <= left : demand + demand * 15 / 100 <= left)
            if fits, estimateBps != nil { left -= demand }
            verdicts.append(fits)
        }
    }
}
