-- Sightline log, schema 3: a scene snapshot may be stored as its changes from an earlier one (issue 12).
-- base: the snapshot this one's body changes (NULL: the body is the whole snapshot, as before);
-- depth: how many changes lie between this snapshot and a whole one (0 for a whole one);
-- chain: the bytes of those changes' bodies, this one's included (0 for a whole one).
-- Existing rows are whole snapshots: base NULL, depth 0, chain 0.
ALTER TABLE snapshots ADD COLUMN base {key} REFERENCES snapshots (key);
ALTER TABLE snapshots ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
ALTER TABLE snapshots ADD COLUMN chain BIGINT NOT NULL DEFAULT 0;
-- A world may read a snapshot that one of its rulings refers to (GET /api/worlds/{world}/snapshots/{key}).
CREATE INDEX rulings_world_snapshot ON rulings (world, snapshot);
