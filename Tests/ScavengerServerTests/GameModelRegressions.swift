// Shrunk sequences that failed GameModelTests once, run every time (a failing seed's shrunk
// sequence, printed with SCAVENGER_MODEL_SHRINK=1, is pasted here with a name saying what it found).

enum GameModelRegressions {
    static let all: [ModelRegression] = [
        // A smoke sequence: a hunt played to the end by one player, reviewed after.
        ModelRegression(name: "solo played to the end", v15: true, ops: [
            .join(player: 0, hunt: 0, team: nil), .start(hunt: 0), .checkIn(player: 0, hunt: 0, stop: 0, tooFar: false),
            .checkIn(player: 0, hunt: 0, stop: 1, tooFar: true), .checkIn(player: 0, hunt: 0, stop: 1, tooFar: false),
            .checkIn(player: 0, hunt: 0, stop: 2, tooFar: false), .approve(player: 0, hunt: 0, stop: 2), .end(hunt: 0),
            .reject(player: 0, hunt: 0, stop: 1),
        ]),
    ]
}
