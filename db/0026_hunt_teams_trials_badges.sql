-- Protocol 1.4's hunt options (issue 43): a team hunt's largest team (`TEAMS [SIZE n]`), a time
-- trial's seconds (`TRIAL seconds`) and the hunt's own badge (`BADGE name`). Null: a hunt of
-- single players, no trial, no badge of its own. The bounds are the contract's; the daemon
-- checks them first and answers BAD_ARGUMENT, these checks only keep the table honest.
ALTER TABLE hunts ADD COLUMN team_size integer CHECK (team_size BETWEEN 2 AND 50);
ALTER TABLE hunts ADD COLUMN trial_s integer CHECK (trial_s BETWEEN 60 AND 604800);
ALTER TABLE hunts ADD COLUMN badge_name text CHECK (char_length(badge_name) BETWEEN 1 AND 40);
