-- Fills a Bench 1 store: :recipes recipes, three ingredients each, 10,000 chefs, 100 cuisines.
-- rating is NULL on every fifth recipe (to be backfilled); cuisine on every seventh.
BEGIN;
INSERT INTO :"schema".chef (name, training)
SELECT 'chef ' || g, CASE WHEN g % 3 = 0 THEN NULL ELSE 'school ' || (g % 17) END FROM generate_series(1, 10000) g;
INSERT INTO :"schema".cuisine (name) SELECT 'cuisine ' || g FROM generate_series(1, 100) g;
INSERT INTO :"schema".recipe (name, instructions, rating, chef_pk, cuisine_pk)
SELECT 'recipe ' || g, 'step one; step two of recipe ' || g,
       CASE WHEN g % 5 = 0 THEN NULL ELSE (g % 5)::smallint END,
       1 + g % 10000, CASE WHEN g % 7 = 0 THEN NULL ELSE 1 + g % 100 END
FROM generate_series(1, :recipes) g;
INSERT INTO :"schema".ingredient (name, amount, recipe_pk)
SELECT 'ingredient ' || i, (i % 9) || ' g', r
FROM generate_series(1, :recipes) r, generate_series(1, 3) i;
COMMIT;
VACUUM ANALYZE;
