// The return path's latency on a running cohost, for `make bench`: participant A beeps and sends frames with
// its capture time burned in; participant B receives the mix-minus and the room view. Prints one JSON line:
// how long after A sent a beep's first packet B received its onset, and how old each picture of the view was
// when B received it (p50/p95, ms). With --forward the room sends no room view, so B's receive-only video line is a
// receive slot: the pictures are A's own, forwarded, and the two figures say how far the voice runs behind them.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Media
import Rooms
import TestSupport

func argument(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

guard let base = argument("--base"), let rtpPort = argument("--rtp-port").flatMap(Int.init),
    let key = argument("--key"), let secret = argument("--secret")
else {
    FileHandle.standardError.write(
        Data("usage: ReturnProbe --base URL --rtp-port P --key K --secret S [--seconds N]\n".utf8))
    exit(2)
}
let seconds = argument("--seconds").flatMap(Double.init) ?? 20
let room = argument("--room") ?? "probe"
let forward = CommandLine.arguments.contains("--forward")

func token(_ user: String, admin: Bool = false) -> String {
    TestToken.mint(key: key, secret: secret, room: room, user: user, admin: admin)
}

/// A blocking POST (URLSession, 10 s).
func post(_ path: String, _ token: String, _ body: String, _ type: String) throws -> (Int, String) {
    guard let url = URL(string: base + path) else { throw ConferenceClient.ClientError("bad URL \(base + path)") }
    var request = URLRequest(url: url, timeoutInterval: 10)
    request.httpMethod = "POST"
    request.httpBody = Data(body.utf8)
    request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    request.setValue(type, forHTTPHeaderField: "Content-Type")
    let reply = Reply()
    let done = DispatchSemaphore(value: 0)
    URLSession.shared.dataTask(with: request) { data, response, _ in
        reply.set((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data())
        done.signal()
    }.resume()
    guard done.wait(timeout: .now() + 15) == .success else {
        throw ConferenceClient.ClientError("POST \(path) timed out")
    }
    let (status, data) = reply.get()
    return (status, String(decoding: data, as: UTF8.self))
}

final class Reply: @unchecked Sendable {
    private let lock = NSLock()
    private var value = (0, Data())
    func set(_ status: Int, _ data: Data) { lock.withLock { value = (status, data) } }
    func get() -> (Int, Data) { lock.withLock { value } }
}

func percentile(_ values: [Double], _ p: Double) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p + 0.5))]
}

do {
    let layout =
        #"{"name":"\#(room)","canvas":{"width":1280,"height":720,"fps":30},"#
        + #""layout":{"mode":"custom","regions":[{"userId":"a","x":0,"y":0,"width":1280,"height":720}]}"#
        + (forward ? #","returnVideo":"none"}"# : "}")
    let (created, text) = try post("/v1/rooms", token("probe", admin: true), layout, "application/json")
    guard created == 201 else { throw ConferenceClient.ClientError("create room: \(created) \(text)") }
    let a = try ConferenceClient(serverPort: rtpPort, audioSSRC: 91_000, toneHz: 1000, amplitude: 0.5)
    a.beep(periodMs: 1000, lengthMs: 200)
    a.sendVideo(width: 640, height: 360, fps: 30, bitrateKbps: 1500) { frame, ms in BurnedTime.draw(&frame, ms) }
    let b = try ConferenceClient(serverPort: rtpPort, audioSSRC: 92_000, toneHz: 0)
    let ages = Ages()
    for (client, user, offer) in [
        (a, "a", a.offer(direction: "sendrecv", video: .vp8, videoDirection: "sendonly")),
        (b, "b", b.offer(direction: "sendrecv", video: .vp8, videoDirection: "recvonly")),
    ] {
        let (status, answer) = try post("/v1/rooms/\(room)/participants", token(user), offer, "application/sdp")
        guard status == 201 else { throw ConferenceClient.ClientError("join \(user): \(status) \(answer)") }
        try client.accept(answer: answer)
    }
    b.onViewFrame { frame, arrival in
        guard let code = BurnedTime.read(frame) else { return ages.unreadable() }
        ages.add(Double((Int(arrival) - code) & 0xFFFF))
    }
    a.start()
    b.start()
    Thread.sleep(forTimeInterval: seconds)
    a.stop()
    b.stop()

    // Beep onsets in B's return audio: the first sample over 0.05 after 300 ms without one.
    let pcm = b.allReceivedAudio
    let packets = b.packetArrivals
    var onsetsAtB: [Double] = []
    var lastLoud = -48_000
    for (i, x) in pcm.enumerated() where abs(x) > 0.05 {
        if i - lastLoud > 14_400, let p = packets.last(where: { $0.pcmOffset <= i }) {
            onsetsAtB.append(Double(p.ms) + Double(i - p.pcmOffset) / 48)
        }
        lastLoud = i
    }
    let sent = a.beepOnsets.map(Double.init)
    var delays: [Double] = []
    for at in onsetsAtB {
        if let t = sent.last(where: { $0 <= at }), at - t < 500 { delays.append(at - t) }
    }
    let view = ages.values
    let result: [String: Any] = [
        "beeps": delays.count, "audio_delay_p50_ms": percentile(delays, 0.5) ?? -1,
        "audio_delay_p95_ms": percentile(delays, 0.95) ?? -1,
        "view_frames": view.count, "view_unreadable": ages.misses,
        "view_age_p50_ms": percentile(view, 0.5) ?? -1, "view_age_p95_ms": percentile(view, 0.95) ?? -1,
    ]
    print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
} catch {
    FileHandle.standardError.write(Data("ReturnProbe: \(error)\n".utf8))
    exit(1)
}

/// The view's picture ages, collected on B's receive thread.
final class Ages: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Double] = []
    private var missed = 0
    func add(_ age: Double) { lock.withLock { list.append(age) } }
    func unreadable() { lock.withLock { missed += 1 } }
    var values: [Double] { lock.withLock { list } }
    var misses: Int { lock.withLock { missed } }
}
