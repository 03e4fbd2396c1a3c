import { Hunts } from "/hunts.js";
// Joining as a guest (an ES module of /play; protocol 1.5): a pupil with no account types the
// hunt's code (filled in from a join link) and a name, and plays that hunt. The page sends
// `JOIN code AS name GUEST` once (a retry would make another guest), keeps the guest's token as
// any session's, and goes on as the signed-in player. A hunt that takes accounts only says so
// next to the form, where the sign-in forms are.
const { report, errorText } = Hunts;

// Sets up the guest form; `onJoined(answer, name)` opens the hunt once the guest is in.
export function setUpGuestJoin({ code, onJoined }) {
  const form = document.getElementById("guest-form");
  if (!form) return;
  const teamField = document.getElementById("guest-team-field");
  const teamInput = document.getElementById("guest-team");
  if (code) document.getElementById("guest-code").value = code;
  form.addEventListener("submit", async (submit) => {
    submit.preventDefault();
    const joinCode = document.getElementById("guest-code").value.trim();
    const name = document.getElementById("guest-name").value.trim();
    const team = teamField.hidden ? "" : teamInput.value.trim();
    const button = document.getElementById("guest-button");
    button.disabled = true;
    report("guest-form", "Joining…", "pending");
    try {
      const answer = await Hunts.client.joinAsGuest(joinCode, name, team ? { team } : {});
      report("guest-form", `Joined “${answer.hunt.name}” as ${answer.user.name}.`);
      await onJoined(answer, name, team || null);
    } catch (error) {
      if (error.code === "BAD_ARGUMENT" && /team/i.test(error.message || "")) {
        teamField.hidden = false;
        teamInput.required = true;
        teamInput.focus();
        report("guest-form", "This hunt is played in teams: type your team's name (a new name starts a team), then Join.", "error");
      } else if (error.code === "BAD_ARGUMENT" && /accounts only/i.test(error.message || "")) {
        report("guest-form", "This hunt needs an account: sign in or create one below, then join it with its code.", "error");
      } else if (error.code === "NOT_FOUND") {
        report("guest-form", "No running or upcoming hunt has that code.", "error");
      } else if (error.code === "CONFLICT" && /named/i.test(error.message || "")) {
        report("guest-form", `Someone in this hunt is already called ${name}: pick another name.`, "error");
      } else {
        report("guest-form", errorText(error), "error");
      }
    } finally {
      button.disabled = false;
    }
  });
}
