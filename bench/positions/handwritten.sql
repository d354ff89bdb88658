-- Positions 1 -> Positions 2 as a person would write it by hand, for comparison with
-- `orchestrator apply`: the order column added, then every ingredient numbered within its
-- recipe by _pk from 0, as Core Data numbers a to-many made ordered. Run with psql -v schema=<store>.
BEGIN;
ALTER TABLE :"schema".ingredient ADD COLUMN recipe_order integer;
UPDATE :"schema".ingredient AS i SET recipe_order = o.position
FROM (SELECT _pk, (row_number() OVER (PARTITION BY recipe_pk ORDER BY _pk) - 1)::integer AS position
      FROM :"schema".ingredient WHERE recipe_pk IS NOT NULL) AS o
WHERE i._pk = o._pk;
COMMIT;
