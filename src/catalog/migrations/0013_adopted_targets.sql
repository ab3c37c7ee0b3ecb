-- Targets adopted by TRANSFORM ... ADOPT EXISTING TABLE (README, "Adopting
-- an existing table"): the application's migrations own such a table, so
-- DROP TRANSFORM leaves it in place (with its last rows) and removes only
-- what Trellis added to it. NULL: Trellis created the target (DROP drops
-- it); otherwise the hidden columns ADOPT added, which DROP removes again.
ALTER TABLE @schema@.transforms ADD COLUMN adopted_columns text[];
