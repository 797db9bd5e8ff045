-- Sightline log, schema 5: the world's name as people know it (hello's world_name, Foundry's world title),
-- kept with each session: the newest name the world sent in it ('' when none was). The pages show a world
-- by the name of its most recently active session that has one, and by its id only when none ever had.
-- Existing sessions: '' (unknown), so an old log reads as before.
ALTER TABLE sessions ADD COLUMN world_name TEXT NOT NULL DEFAULT '';
