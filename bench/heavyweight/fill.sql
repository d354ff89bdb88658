-- Fills a Heavy 1 store: :recipes recipes, 10,000 chefs. Temperatures in Fahrenheit, with
-- tenths; NULL on every eleventh recipe, as is the chef on every thirteenth, the rating on
-- every fifth and the instructions on every seventh.
BEGIN;
INSERT INTO :"schema".chef (name, training)
SELECT 'chef ' || g, CASE WHEN g % 3 = 0 THEN NULL ELSE 'school ' || (g % 17) END FROM generate_series(1, 10000) g;
INSERT INTO :"schema".recipe (name, instructions, rating, servings, temperature, added, chef_pk)
SELECT 'recipe ' || g,
       CASE WHEN g % 7 = 0 THEN NULL ELSE 'step one; step two of recipe ' || g END,
       CASE WHEN g % 5 = 0 THEN NULL ELSE (g % 5)::smallint END,
       (1 + g % 8)::smallint,
       CASE WHEN g % 11 = 0 THEN NULL ELSE 250 + (g % 2500) / 10.0 END,
       timestamptz '2020-01-01 00:00:00+00' + g * interval '37 seconds' + (g % 1000) * interval '1 millisecond',
       CASE WHEN g % 13 = 0 THEN NULL ELSE 1 + g % 10000 END
FROM generate_series(1, :recipes) g;
COMMIT;
VACUUM ANALYZE;
