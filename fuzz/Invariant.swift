/// Stops the fuzzer with a message when an invariant breaks (libFuzzer saves the input).
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
