-- A hunt write appends its change-log entries in one statement, its last before COMMIT, so the
-- log's ordering lock (advisory 7468, taken by log_hunt_change) is held only for those rows and
-- the commit, never while the write waits for a row lock: no lock cycle can pass through it.
-- `changes` is a JSON array of {"hunt": text, "kind": text, "payload": jsonb}, appended in array
-- order; answers the last position written (0 for an empty array).
CREATE FUNCTION log_hunt_changes(changes jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    entry jsonb;
    logged bigint := 0;
BEGIN
    FOR entry IN SELECT value FROM jsonb_array_elements(changes) WITH ORDINALITY ORDER BY ordinality LOOP
        logged := log_hunt_change(entry->>'hunt', entry->>'kind', entry->'payload');
    END LOOP;
    RETURN logged;
END
$$;

-- Each wrong code has an id: a guess is counted before the code is checked (under the player's
-- lock, so the limit holds however many arrive at once) and taken back by its id when the code
-- was right.
ALTER TABLE code_guesses ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE code_guesses ADD PRIMARY KEY (id);
