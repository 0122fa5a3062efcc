//! How admin commands print: aligned tables, JSON, durations and UTC times.

use super::AdminError;
pub use async_worker::status::format::utc_iso as utc;
use serde::Serialize;

/// Prints `value` as pretty JSON on stdout.
pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<(), AdminError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| AdminError::BadInput(format!("cannot write JSON: {e}")))?;
    println!("{text}");
    Ok(())
}

/// Prints `rows` as JSON with `--json` (`as_json`), else as a table under
/// `header`, `cells` giving each row's cells. True when it printed the
/// table, which a command may follow with a summary line.
pub fn print_rows<T: Serialize>(
    as_json: bool,
    rows: &[T],
    header: &[&str],
    cells: impl Fn(&T) -> Vec<String>,
) -> Result<bool, AdminError> {
    if as_json {
        json(rows)?;
        return Ok(false);
    }
    let mut t = Table::new(header);
    for row in rows {
        t.row(cells(row));
    }
    t.print();
    Ok(true)
}

/// What a command did to each generation: JSON, or a table (queue, id,
/// generation, outcome) and then `summary` of how many rows `done` counts
/// among all of them.
pub fn print_outcomes<T: Serialize>(
    as_json: bool,
    rows: &[T],
    cells: impl Fn(&T) -> [String; 4],
    done: impl Fn(&T) -> bool,
    summary: impl FnOnce(usize, usize) -> String,
) -> Result<(), AdminError> {
    let header = ["QUEUE", "ID", "GENERATION", "OUTCOME"];
    if print_rows(as_json, rows, &header, |r| cells(r).into())? {
        let n = rows.iter().filter(|r| done(r)).count();
        println!("{}", summary(n, rows.len()));
    }
    Ok(())
}

/// The id and generation cells of an entry whose member may not parse:
/// `(unparsable)` and `-` then.
pub fn id_cells(id: Option<&str>, token: Option<&str>) -> [String; 2] {
    [id.unwrap_or("(unparsable)"), token.unwrap_or("-")].map(str::to_owned)
}

/// A table: a header row and rows of cells, printed with aligned columns.
#[derive(Debug)]
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table {
            rows: vec![header.iter().map(|h| (*h).to_owned()).collect()],
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, columns two spaces apart, no trailing spaces.
    pub fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                let cell = |r: &Vec<String>| r.get(c).map_or(0, |s| s.chars().count());
                self.rows.iter().map(cell).max().unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c > 0 {
                    line.push_str("  ");
                }
                line.push_str(cell);
                let pad = widths[c] - cell.chars().count();
                line.extend(std::iter::repeat_n(' ', pad));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// Prints the table, or `(none)` under the header when it has no rows.
    pub fn print(&self) {
        print!("{}", self.render());
        if self.rows.len() == 1 {
            println!("(none)");
        }
    }
}

/// A duration in ms, short: `850ms`, `12.3s`, `4m05s`, `2h03m`; `-` for none.
pub fn duration(ms: Option<u64>) -> String {
    let Some(ms) = ms else {
        return "-".into();
    };
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{:.1}s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{}m{:02}s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{}h{:02}m", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// A signed duration (lease left): negative ones as `expired 1.2s ago`.
pub fn lease_left(ms: i64) -> String {
    if ms >= 0 {
        duration(Some(ms as u64))
    } else {
        format!("expired {} ago", duration(Some(ms.unsigned_abs())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns_two_spaces_apart_without_trailing_spaces() {
        let mut t = Table::new(&["queue", "pending"]);
        t.row(vec!["a-long-queue".into(), "3".into()]);
        assert_eq!(t.render(), "queue         pending\na-long-queue  3\n");
    }

    #[test]
    fn durations_and_times_read_as_an_operator_expects() {
        assert_eq!(duration(Some(850)), "850ms");
        assert_eq!(duration(Some(12_345)), "12.3s");
        assert_eq!(duration(Some(245_000)), "4m05s");
        assert_eq!(duration(Some(7_380_000)), "2h03m");
        assert_eq!(duration(None), "-");
        assert_eq!(lease_left(-1_200), "expired 1.2s ago");
        assert_eq!(utc(1_700_000_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
    }
}
