import Testing

@testable import Store

/// A store on another machine is reached over TLS with its certificate checked unless the URL says otherwise.
@Suite struct PostgresURLTests {
    @Test func aRemoteHostWithoutSSLModeGetsVerifyFull() {
        #expect(
            PostgresURL.withSecureDefault("postgres://cohost:pw@db.internal:5432/cohost")
                == "postgres://cohost:pw@db.internal:5432/cohost?sslmode=verify-full")
        #expect(
            PostgresURL.withSecureDefault("postgresql://db.internal/cohost?connect_timeout=5")
                == "postgresql://db.internal/cohost?connect_timeout=5&sslmode=verify-full")
        #expect(
            PostgresURL.withSecureDefault("postgres://u@[2001:db8::5]:5432/c")
                == "postgres://u@[2001:db8::5]:5432/c?sslmode=verify-full")
        #expect(
            PostgresURL.withSecureDefault("postgres://u@10.0.0.5/c") == "postgres://u@10.0.0.5/c?sslmode=verify-full")
    }

    @Test func anSSLModeGivenLoopbackAndSocketsAreLeftAsGiven() {
        for url in [
            "postgres://u:pw@db.internal/c?sslmode=require", "postgres://u@DB/c?SSLMODE=disable",
            "postgres://u@127.0.0.1:5432/c", "postgres://u@localhost/c", "postgres://u@[::1]/c",
            "postgres:///c?host=/var/run/postgresql", "postgresql://u@/c", "host=db.internal dbname=c",
        ] {
            #expect(PostgresURL.withSecureDefault(url) == url, "\(url)")
        }
    }
}
