import { Hunts } from "/hunts.js";
// The player's scores across hunts (an ES module of /play): PROFILE, their badges (BADGES) and the
// ranking around them (RANKING AROUND).
const { say, request, element, count, errorText } = Hunts;

// Scores across hunts: PROFILE, and the ranking around the player (RANKING AROUND), all
// time or this week; read again after the player's own check-ins and, at most every few
// seconds, when someone finds a stop.
let rankingWeek = false;
let scoresTimer = null;
export async function readScores() {
  // A guest has no scores across hunts (PROFILE and BADGES are the account's).
  if (Hunts.user && Hunts.user.guest) return;
  try {
    const profile = await request("PROFILE");
    const rank = profile.rank === null ? "not ranked yet" : `rank ${profile.rank}`;
    // Before a first find there is nothing to count ("0 of 0 hunts" said nothing).
    document.getElementById("profile").textContent = profile.hunts_played === 0 && profile.points === 0
      ? "No points yet: find a stop to get on the ranking."
      : `${count(profile.points, "point")}, ${count(profile.stops_found, "stop")} found, `
        + `${profile.hunts_completed} of ${count(profile.hunts_played, "hunt")} completed: ${rank}.`;
    const held = await request("BADGES");
    document.getElementById("no-badges").hidden = held.badges.length > 0;
    document.getElementById("badges").replaceChildren(...held.badges.map(badgeItem));
    const page = await request(`RANKING${rankingWeek ? " WEEK" : ""} AROUND LIMIT 10`);
    document.getElementById("ranking-note").textContent = page.entries.length === 0
      ? (rankingWeek ? "Nobody has points this week yet (weeks start on Monday, 00:00 UTC)." : "Nobody has points yet.")
      : (rankingWeek ? "This week, from Monday 00:00 UTC" : "All time");
    document.getElementById("ranking-rows").replaceChildren(...page.entries.map((entry) => {
      const row = element("tr");
      row.dataset.player = entry.player;
      if (Hunts.user && entry.player === Hunts.user.name) row.className = "me";
      row.append(element("td", "rank", entry.rank), element("td", "player", entry.player),
        element("td", "points", entry.points), element("td", "found", entry.found));
      return row;
    }));
    document.getElementById("scores-section").hidden = false;
  } catch (error) { say(errorText(error), "error"); }
}
export function readScoresSoon() {
  if (scoresTimer !== null) return;
  scoresTimer = setTimeout(() => { scoresTimer = null; readScores(); }, 3000);
}
for (const [id, week] of [["ranking-all", false], ["ranking-week", true]]) {
  document.getElementById(id).addEventListener("click", () => {
    rankingWeek = week;
    document.getElementById("ranking-all").setAttribute("aria-pressed", String(!week));
    document.getElementById("ranking-week").setAttribute("aria-pressed", String(week));
    readScores();
  });
}

// A badge of the player's, listed under their scores (play.js toasts the ones earned meanwhile).
function badgeItem(badge) {
  const item = element("li");
  item.dataset.badge = badge.id;
  item.append(element("strong", null, badge.name), " " + badge.description);
  return item;
}
