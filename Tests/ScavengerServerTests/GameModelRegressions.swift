// Shrunk sequences that failed GameModelTests once, run every time (a failing seed's shrunk
// sequence, printed with SCAVENGER_MODEL_SHRINK=1, is pasted here with a name saying what it found;
// some were written by hand from what a shrunk one showed). Players: 0 amy, 1 bob, 2 cat, 3 dan,
// 4 eve, 5 fay. Hunts (modelHunts): 0 solo (stop 2 a photo stop, a hunt badge), 1 ordered,
// 2 trial (1,800 s; stop 2 a photo stop), 3 teams (size 3; stop 2 a photo stop, a hunt badge),
// 4 teamtrial (size 3, 1,800 s), 5 far (100 km north). Teams: 0 red, 1 blue, 2 green.
// Every case runs under the 1.5 rules the daemon follows: the views that disagreed before
// (found under 1.4's rules) and the 1.5 revisions, each shrunk from a failing seed or written
// from its pattern; each failed on main before the game model (issues 51, 52).

enum GameModelRegressions {
    static let all: [ModelRegression] = [
        // A smoke sequence: a hunt played to the end by one player, reviewed after.
        ModelRegression(name: "solo played to the end", v15: true, ops: [
            .join(player: 0, hunt: 0, team: nil), .start(hunt: 0), .checkIn(player: 0, hunt: 0, stop: 0, tooFar: false),
            .checkIn(player: 0, hunt: 0, stop: 1, tooFar: true), .checkIn(player: 0, hunt: 0, stop: 1, tooFar: false),
            .checkIn(player: 0, hunt: 0, stop: 2, tooFar: false), .approve(player: 0, hunt: 0, stop: 2), .end(hunt: 0),
            .reject(player: 0, hunt: 0, stop: 1),
        ]),

        // MARK: Views that disagree today (1.2–1.4 rules)

        ModelRegression(name: "once wrong under 1.4, now under 1.5 rules: a member who moves teams after their team completed keeps hunts_completed (seed 3)", v15: true, seed: 3, ops: [
            .join(player: 2, hunt: 3, team: 0), .join(player: 4, hunt: 3, team: 0), .start(hunt: 3), .join(player: 3, hunt: 3, team: 0),
            .checkIn(player: 4, hunt: 3, stop: 1, tooFar: false), .checkIn(player: 4, hunt: 3, stop: 2, tooFar: false),
            .checkIn(player: 2, hunt: 3, stop: 0, tooFar: false), .approve(player: 4, hunt: 3, stop: 2), .join(player: 3, hunt: 3, team: 1),
        ]),
        ModelRegression(name: "once wrong under 1.4, now under 1.5 rules: an approval completing a team its player has moved out of gives that player the completion badges (seed 6)", v15: true, seed: 6, ops: [
            .start(hunt: 5), .start(hunt: 4), .join(player: 5, hunt: 5, team: nil), .join(player: 5, hunt: 4, team: 2),
            .checkIn(player: 5, hunt: 5, stop: 1, tooFar: false), .checkIn(player: 5, hunt: 4, stop: 1, tooFar: false),
            .join(player: 5, hunt: 4, team: 1), .join(player: 2, hunt: 4, team: 2), .checkIn(player: 2, hunt: 4, stop: 0, tooFar: false),
            .approve(player: 5, hunt: 4, stop: 1),
        ]),
        ModelRegression(name: "once wrong under 1.4, now under 1.5 rules: a teammate's REJECT undoes the last completion but leaves finisher (seed 8)", v15: true, seed: 8, ops: [
            .join(player: 0, hunt: 3, team: 0), .start(hunt: 3), .start(hunt: 4), .join(player: 2, hunt: 4, team: 0),
            .checkIn(player: 2, hunt: 4, stop: 1, tooFar: false), .checkIn(player: 2, hunt: 4, stop: 0, tooFar: false), .leave(player: 2, hunt: 4),
            .join(player: 2, hunt: 3, team: 0), .checkIn(player: 2, hunt: 3, stop: 0, tooFar: false),
            .checkIn(player: 0, hunt: 3, stop: 1, tooFar: false), .checkIn(player: 2, hunt: 3, stop: 2, tooFar: false),
            .approve(player: 2, hunt: 3, stop: 2), .reject(player: 0, hunt: 3, stop: 1),
        ]),
        ModelRegression(name: "once wrong under 1.4, now under 1.5 rules: a member who moves teams and then leaves: the old team's entry keeps their finds", v15: true, ops: [
            .join(player: 0, hunt: 3, team: 0), .join(player: 1, hunt: 3, team: 0), .start(hunt: 3),
            .checkIn(player: 0, hunt: 3, stop: 0, tooFar: false), .join(player: 0, hunt: 3, team: 1), .leave(player: 0, hunt: 3),
        ]),
        ModelRegression(name: "once wrong under 1.4, now under 1.5 rules: a teammate's LEAVE undoes the team's completion but the others' hunts_completed keep it", v15: true, ops: [
            .join(player: 0, hunt: 3, team: 0), .join(player: 1, hunt: 3, team: 0), .start(hunt: 3),
            .checkIn(player: 0, hunt: 3, stop: 0, tooFar: false), .checkIn(player: 0, hunt: 3, stop: 1, tooFar: false),
            .checkIn(player: 1, hunt: 3, stop: 2, tooFar: false), .approve(player: 1, hunt: 3, stop: 2), .leave(player: 1, hunt: 3),
        ]),

        // MARK: The 1.5 revisions

        ModelRegression(name: "1.5: LEAVE is final in a running trial", v15: true, ops: [
            .join(player: 0, hunt: 2, team: nil), .start(hunt: 2), .leave(player: 0, hunt: 2), .join(player: 0, hunt: 2, team: nil),
        ]),
        ModelRegression(name: "1.5: LEAVE is final in a running team hunt", v15: true, ops: [
            .join(player: 0, hunt: 3, team: 0), .start(hunt: 3), .leave(player: 0, hunt: 3), .join(player: 0, hunt: 3, team: 0),
        ]),
        ModelRegression(name: "1.5: a member's team is fixed once the hunt runs", v15: true, ops: [
            .join(player: 0, hunt: 3, team: 0), .start(hunt: 3), .join(player: 0, hunt: 3, team: 1),
        ]),
        ModelRegression(name: "1.5: the player's own LEAVE takes the completion and its badges back", v15: true, ops: [
            .join(player: 0, hunt: 5, team: nil), .start(hunt: 5), .checkIn(player: 0, hunt: 5, stop: 0, tooFar: false),
            .checkIn(player: 0, hunt: 5, stop: 1, tooFar: false), .leave(player: 0, hunt: 5),
        ]),
        ModelRegression(name: "1.5: a teammate's LEAVE takes the team's completion and its badges back", v15: true, ops: [
            .join(player: 0, hunt: 3, team: 0), .join(player: 1, hunt: 3, team: 0), .start(hunt: 3),
            .checkIn(player: 0, hunt: 3, stop: 0, tooFar: false), .checkIn(player: 0, hunt: 3, stop: 1, tooFar: false),
            .checkIn(player: 1, hunt: 3, stop: 2, tooFar: false), .approve(player: 1, hunt: 3, stop: 2), .leave(player: 1, hunt: 3),
        ]),
        ModelRegression(name: "1.5: a moderator's removal takes the completion and its badges back", v15: true, ops: [
            .join(player: 0, hunt: 5, team: nil), .start(hunt: 5), .checkIn(player: 0, hunt: 5, stop: 0, tooFar: false),
            .checkIn(player: 0, hunt: 5, stop: 1, tooFar: false), .remove(hunt: 5),
        ]),
        ModelRegression(name: "1.5: first-find stays when a REJECT takes a check-in that did not earn it", v15: true, ops: [
            .join(player: 0, hunt: 5, team: nil), .join(player: 0, hunt: 0, team: nil), .start(hunt: 5), .start(hunt: 0),
            .checkIn(player: 0, hunt: 5, stop: 0, tooFar: false), .leave(player: 0, hunt: 5), .checkIn(player: 0, hunt: 0, stop: 0, tooFar: false),
            .reject(player: 0, hunt: 0, stop: 0),
        ]),
        ModelRegression(name: "1.5: a stop has one pathfinder ever: none after its first finder leaves", v15: true, ops: [
            .join(player: 0, hunt: 0, team: nil), .join(player: 1, hunt: 0, team: nil), .join(player: 2, hunt: 0, team: nil),
            .join(player: 3, hunt: 0, team: nil), .join(player: 4, hunt: 0, team: nil), .join(player: 5, hunt: 0, team: nil), .start(hunt: 0),
            .checkIn(player: 0, hunt: 0, stop: 0, tooFar: false), .leave(player: 0, hunt: 0), .checkIn(player: 1, hunt: 0, stop: 0, tooFar: false),
        ]),
        ModelRegression(name: "1.5: a team trial's clock stays when the check-in that started it leaves with a teammate", v15: true, ops: [
            .join(player: 0, hunt: 4, team: 0), .join(player: 1, hunt: 4, team: 0), .start(hunt: 4),
            .checkIn(player: 0, hunt: 4, stop: 0, tooFar: false), .tick, .tick, .leave(player: 0, hunt: 4),
            .checkIn(player: 1, hunt: 4, stop: 1, tooFar: false),
        ]),
    ]
}
