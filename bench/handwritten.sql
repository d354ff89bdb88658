-- Bench 1 -> Bench 2 as a person would write it by hand, for comparison with
-- `orchestrator apply`. Run with psql -v schema=<store>.
BEGIN;
ALTER TABLE :"schema".chef RENAME TO cook;
ALTER TABLE :"schema".cook DROP CONSTRAINT chef_entity_check;
UPDATE :"schema".cook SET _entity = 'Cook';
ALTER TABLE :"schema".cook ALTER COLUMN _entity SET DEFAULT 'Cook';
ALTER TABLE :"schema".cook ADD CONSTRAINT cook_entity_check CHECK (_entity IN ('Cook'));
ALTER TABLE :"schema".recipe RENAME COLUMN instructions TO directions;
UPDATE :"schema".recipe SET rating = 0 WHERE rating IS NULL;
ALTER TABLE :"schema".recipe
    ALTER COLUMN rating SET DEFAULT 0,
    ALTER COLUMN rating SET NOT NULL,
    ADD COLUMN summary text,
    ADD COLUMN servings smallint NOT NULL DEFAULT 1;
CREATE TABLE :"schema".cuisine__recipes (
    cuisine_pk bigint NOT NULL,
    recipes_pk bigint NOT NULL,
    PRIMARY KEY (cuisine_pk, recipes_pk)
);
INSERT INTO :"schema".cuisine__recipes (cuisine_pk, recipes_pk)
SELECT cuisine_pk, _pk FROM :"schema".recipe WHERE cuisine_pk IS NOT NULL;
ALTER TABLE :"schema".recipe DROP COLUMN cuisine_pk;
ALTER TABLE :"schema".cuisine__recipes
    ADD CONSTRAINT cuisine__recipes_cuisine_pk_fkey FOREIGN KEY (cuisine_pk) REFERENCES :"schema".cuisine (_pk) ON DELETE CASCADE,
    ADD CONSTRAINT cuisine__recipes_recipes_pk_fkey FOREIGN KEY (recipes_pk) REFERENCES :"schema".recipe (_pk) ON DELETE CASCADE;
CREATE INDEX cuisine__recipes_recipes_pk_idx ON :"schema".cuisine__recipes (recipes_pk);
COMMIT;
