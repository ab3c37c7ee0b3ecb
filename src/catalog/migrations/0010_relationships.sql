-- Relationships: a named link from a column of one table to a column of
-- another, declared once (RELATIONSHIP name FROM t.col TO u.col) and read
-- by transform definitions as `name.column` paths, which define expands
-- into the LEFT JOIN they stand for. A definition stores that join, so a
-- relationship dropped later leaves the transforms that read it as they
-- are. Names are unique per FROM table; `cardinality` is 'to_one' when the
-- TO column is the TO table's primary key or a unique NOT NULL column.
CREATE TABLE @schema@.relationships (
  id serial PRIMARY KEY,
  name text NOT NULL,
  from_schema text NOT NULL,
  from_table text NOT NULL,
  from_col text NOT NULL,
  to_schema text NOT NULL,
  to_table text NOT NULL,
  to_col text NOT NULL,
  cardinality text NOT NULL CHECK (cardinality IN ('to_one', 'to_many')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (from_schema, from_table, name)
);
