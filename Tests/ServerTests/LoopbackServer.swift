import Hummingbird
import Logging
import ServiceLifecycle
import Testing

/// Runs `router` as a real HTTP server on a free loopback port for the duration of `body`, which gets the port.
func withLoopbackServer(
    _ router: Router<BasicRequestContext>, _ body: (Int) async throws -> Void
) async throws {
    let (ports, bound) = AsyncStream.makeStream(of: Int.self)
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            bound.yield(channel.localAddress?.port ?? 0)
            bound.finish()
        })
    let group = ServiceGroup(services: [app], logger: Logger(label: "test"))
    async let run: Void = group.run()
    let port = try #require(await ports.first { _ in true })
    do { try await body(port) } catch {
        await group.triggerGracefulShutdown()
        try await run
        throw error
    }
    await group.triggerGracefulShutdown()
    try await run
}
