/// A stretch of text set in one face in one direction: `length` UTF-8 bytes from `start`. `face` -1 is one
/// cluster no face has, drawn as a hollow box.
struct TextRun: Equatable {
    var start: Int
    var length: Int
    var face: Int
    var rightToLeft: Bool
}
