-- Fills a Positions 1 store: :recipes recipes, three ingredients each, inserted round-robin over
-- the recipes (as an application adds them over time), so the rows of a recipe's ingredients
-- lie far apart in the table and the order the positions are numbered in (recipe by recipe)
-- is not the table's.
BEGIN;
INSERT INTO :"schema".recipe (name) SELECT 'recipe ' || g FROM generate_series(1, :recipes) g;
INSERT INTO :"schema".ingredient (name, recipe_pk)
SELECT 'ingredient ' || i, 1 + i % :recipes FROM generate_series(1, 3 * :recipes) i;
COMMIT;
VACUUM ANALYZE;
