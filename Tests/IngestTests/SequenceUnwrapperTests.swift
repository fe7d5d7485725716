import Testing
@testable import Ingest

@Suite struct SequenceUnwrapperTests {
    @Test func continuesAcrossTheWrap() {
        var u = SequenceUnwrapper()
        #expect([65534, 65535, 0, 1].map { u.unwrap($0) } == [65534, 65535, 65536, 65537])
        #expect(u.highest == 65537)
    }

    @Test func reorderedPacketFromBeforeTheWrapLandsBelowIt() {
        var u = SequenceUnwrapper()
        #expect([65535, 1, 0, 65534].map { u.unwrap($0) } == [65535, 65537, 65536, 65534])
        #expect(u.highest == 65537)
    }

    @Test func secondWrapAddsAnotherCycle() {
        var u = SequenceUnwrapper()
        var values: [Int64] = []
        var seq: UInt16 = 60000
        for _ in 0..<140 {
            values.append(u.unwrap(seq))
            seq &+= 1000
        }
        let last: Int64? = values.last
        #expect(last == Int64(199_000))  // 60000 + 139 * 1000
    }

    @Test func packetBeforeTheFirstGoesNegative() {
        var u = SequenceUnwrapper()
        #expect(u.unwrap(5) == 5)
        #expect(u.unwrap(65530) == -6)
        #expect(u.highest == 5)
        #expect(u.peek(6) == 6)
    }
}
