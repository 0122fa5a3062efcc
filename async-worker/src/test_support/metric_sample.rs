//! One sample of a metrics page picked by its labels, for tests that read a counter of one queue or one reason.

/// The value of the sample of `name` whose labels include every `labels`
/// pair (`key="value"`), when the page has one.
pub fn sample(page: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    page.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{'))
        })
        .find(|l| (labels.iter()).all(|(k, v)| l.contains(&format!("{k}=\"{v}\""))))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}
