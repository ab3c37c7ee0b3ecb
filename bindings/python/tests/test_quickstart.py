"""The README's example: examples/quickstart.py is the code the README shows,
literally, and it runs against a real database as the README says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import trellis
from support import Psql

PACKAGE = Path(__file__).resolve().parents[1]
EXAMPLE = PACKAGE / "examples" / "quickstart.py"
README = PACKAGE / "README.md"
TARGET_QUERY = "SELECT customer_id, SUM(amount) AS total FROM orders GROUP BY customer_id"


def test_the_readme_shows_the_example_literally() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert EXAMPLE.read_text() in blocks


def test_the_example_runs(database_url: str, db: Psql) -> None:
    # The example uses the default catalog schema and the names `orders` and
    # `order_totals`: start them afresh.
    with trellis.connect(database_url) as t:
        if t.status("order_totals") is not None:
            t.apply("PAUSE TRANSFORM order_totals")
            t.apply("DROP TRANSFORM order_totals")
    db.run(
        """
        SET client_min_messages = warning;
        DROP TABLE IF EXISTS order_totals, orders CASCADE;
        CREATE TABLE orders (id bigint PRIMARY KEY, customer_id int NOT NULL,
                             amount numeric(12,2) NOT NULL);
        CREATE INDEX ON orders (customer_id);
        INSERT INTO orders SELECT g, g % 7, g * 0.25 FROM generate_series(1, 500) g;
        """
    )
    environment = dict(os.environ, TRELLIS_DATABASE_URL=database_url)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(Path(trellis.__file__).resolve().parents[1])]
        + ([environment["PYTHONPATH"]] if environment.get("PYTHONPATH") else [])
    )
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # The library logs to stdout too (timestamped lines): leave those out.
    printed = [line for line in done.stdout.splitlines() if not re.match(r"\[\d{4}-", line)]
    assert printed == ["live"], done.stdout
    assert db.differences("order_totals", TARGET_QUERY) == 0
