import Testing

/// Every end-to-end suite nests here. They start real processes (cohost, nginx-rtmp, ffmpeg) on loopback and some
/// measure timing, so they run one at a time; the unit suites of the other test targets run in parallel.
@Suite(.serialized) enum EndToEnd {}
