"""A small table of rows (the reference package's TinyDataFrame's shape):
len(), a row by index as a dict, a column by name as a list, slices,
to_dict(), to_csv(). No dependency beyond the standard library."""
import csv
import html
import io
from typing import Callable, NamedTuple, Optional


class Table:
    """Rows of samples with named columns."""

    def __init__(self, data=None, columns=None):
        """data: a list of dicts, a dict of lists, or rows (lists) with columns."""
        self._cols = []
        self._rows = []
        if isinstance(data, dict):
            self._cols = list(data)
            n = max((len(v) for v in data.values()), default=0)
            self._rows = [[data[c][i] if i < len(data[c]) else None for c in self._cols]
                          for i in range(n)]
        elif data and isinstance(data[0], dict):
            self._cols = list(columns or data[0])
            self._rows = [[r.get(c) for c in self._cols] for r in data]
        elif data:
            self._cols = list(columns or [])
            self._rows = [list(r) for r in data]
        else:
            self._cols = list(columns or [])

    def _new(self, rows, cols):
        """A table of this one's kind (a TinyDataFrame's slice is one)."""
        t = object.__new__(type(self))
        t._rows = [list(r) for r in rows]
        t._cols = list(cols)
        return t

    @property
    def columns(self):
        return list(self._cols)

    def __len__(self):
        return len(self._rows)

    def __iter__(self):
        for r in self._rows:
            yield dict(zip(self._cols, r))

    def __getitem__(self, key):
        if isinstance(key, str):
            i = self._cols.index(key)
            return [r[i] for r in self._rows]
        if isinstance(key, slice):
            return self._new(self._rows[key], self._cols)
        if isinstance(key, (list, tuple)):
            idx = [self._cols.index(k) for k in key]
            return self._new([[r[i] for i in idx] for r in self._rows], list(key))
        return dict(zip(self._cols, self._rows[key]))

    def __setitem__(self, key, values):
        values = list(values)
        if key in self._cols:
            i = self._cols.index(key)
            for r, v in zip(self._rows, values):
                r[i] = v
        else:
            self._cols.append(key)
            if not self._rows:
                self._rows = [[v] for v in values]
            for r, v in zip(self._rows, values):
                r.append(v)

    def __contains__(self, key):
        return key in self._cols

    def __repr__(self):
        head = ", ".join(self._cols[:6]) + (", ..." if len(self._cols) > 6 else "")
        return "<Table: %d rows x %d columns (%s)>" % (len(self._rows), len(self._cols), head)

    def __str__(self):
        """The first 10 rows, aligned: numbers to the right, text to the left."""
        title = "Table with %d rows and %d columns" % (len(self._rows), len(self._cols))
        if not self._rows:
            return title + " (empty)"
        shown = self._rows[:10]
        cells = [["" if v is None else str(v) for v in r] for r in shown]
        width = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(self._cols)]

        def cell(i, v, raw):
            return v.rjust(width[i]) if isinstance(raw, (int, float)) else v.ljust(width[i])

        lines = [title + ":", " | ".join(c.ljust(width[i]) for i, c in enumerate(self._cols)),
                 "-+-".join("-" * w for w in width)]
        for r, raw in zip(cells, shown):
            lines.append(" | ".join(cell(i, v, raw[i]) for i, v in enumerate(r)))
        if len(self._rows) > len(shown):
            lines.append("... %d more rows" % (len(self._rows) - len(shown)))
        return "\n".join(lines)

    def _repr_html_(self):
        """Jupyter's view: the first 10 rows as an HTML table under the
        same title as print()'s."""
        title = "Table with %d rows and %d columns" % (len(self._rows), len(self._cols))
        shown = self._rows[:10]

        def td(v):
            right = isinstance(v, (int, float)) and not isinstance(v, bool)
            return "<td style='text-align:%s'>%s</td>" % (
                "right" if right else "left", html.escape("" if v is None else str(v)))
        rows = "".join("<tr>%s</tr>" % "".join(td(v) for v in r) for r in shown)
        more = ("<p>... %d more rows</p>" % (len(self._rows) - len(shown))
                if len(self._rows) > len(shown) else "")
        return ("<div class=rt-table><p><b>%s</b></p><table><thead><tr>%s</tr></thead>"
                "<tbody>%s</tbody></table>%s</div>"
                % (html.escape(title),
                   "".join("<th>%s</th>" % html.escape(str(c)) for c in self._cols), rows, more))

    def to_pandas(self):
        """A pandas DataFrame of the rows, `timestamp` as UTC datetimes.
        pandas is not a dependency: without it, ImportError says so."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("rt_tracker: to_pandas() needs pandas, which is not installed "
                              "here (pip install pandas); to_dict() and to_columns() give the "
                              "same data without it") from None
        df = pd.DataFrame(self._rows, columns=self._cols)
        if "timestamp" in df.columns:
            df["timestamp"] = pd.to_datetime(df["timestamp"], unit="s", utc=True)
        return df

    def head(self, n=5):
        """The first n rows (all but the last -n when n is negative)."""
        return self._new(self._rows[:n], self._cols)

    def tail(self, n=5):
        """The last n rows (all but the first -n when n is negative)."""
        return self._new(self._rows[-n:] if n else [], self._cols)

    def rename(self, columns):
        return Table(self._rows, [columns.get(c, c) for c in self._cols])

    def to_dict(self):
        """The rows, each a dict of column to value (the reference's shape:
        R's reticulate makes a data.frame of it)."""
        return list(self)

    def to_columns(self):
        """Each column's values, by name."""
        return {c: [r[i] for r in self._rows] for i, c in enumerate(self._cols)}

    def stats(self, specs):
        """{column: {agg_name: value}} for each StatSpec (or (column, agg)
        pair, agg a function of the column's values), as the reference's
        TinyDataFrame.stats(); a spec that fails is left out."""
        out = {}
        for spec in specs:
            spec = spec if isinstance(spec, StatSpec) else StatSpec(*spec)
            try:
                v = spec.agg([x for x in self[spec.column] if x is not None])
                if spec.round is not None:
                    v = round(v, spec.round)
            except Exception:
                continue
            out.setdefault(spec.column, {})[spec.agg_name or spec.agg.__name__] = v
        return out


    def to_csv(self, path=None, quote_strings=True):
        """The table as CSV text, or written to path (then the path)."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n",
                       quoting=csv.QUOTE_NONNUMERIC if quote_strings else csv.QUOTE_MINIMAL)
        w.writerow(self._cols)
        for r in self._rows:
            w.writerow(["" if v is None else v for v in r])
        if path is None:
            return buf.getvalue()
        with open(path, "w", newline="") as f:
            f.write(buf.getvalue())
        return path


def _number(text):
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def from_csv(text):
    """A Table from CSV text (numbers as int or float, empty as None)."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return Table()
    return Table([[_number(v) for v in r] for r in rows[1:]], rows[0])


class StatSpec(NamedTuple):
    """What Table.stats() collects, the reference's NamedTuple field for
    field: agg (a function of a column's values) of column, named agg_name
    (default the function's name), rounded to round digits when given."""

    column: str
    agg: Callable
    agg_name: Optional[str] = None
    round: Optional[int] = None
