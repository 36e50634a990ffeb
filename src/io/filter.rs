//! Game filters, applied to a game's tags before it is replayed or
//! searched: both players' ratings, their mean, the speed (Lichess's
//! classes), the date, the termination, the players' titles and the
//! result.
//!
//! A game is checked against the filters in a fixed order (ratings, mean
//! rating, speed, date, termination, titles, result) and counted under the first
//! it fails. A game that lacks the tag a filter needs (or holds a value it
//! cannot read: `?`, a date with `??`) fails that filter and is counted
//! apart, as without the tag.

/// The tags the filters read besides the seven-tag roster, in the order a
/// reader is asked for them.
pub const FILTER_TAGS: [&[u8]; 7] = [
    b"WhiteElo",
    b"BlackElo",
    b"TimeControl",
    b"UTCDate",
    b"Termination",
    b"WhiteTitle",
    b"BlackTitle",
];

/// A speed class, as Lichess sorts games (lila-openingexplorer): from the
/// estimated duration, the base time plus 40 increments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Speed {
    /// Under 30 seconds.
    UltraBullet,
    /// Under 3 minutes.
    Bullet,
    /// Under 8 minutes.
    Blitz,
    /// Under 25 minutes.
    Rapid,
    /// Under 6 hours.
    Classical,
    /// Longer, or no clock (`-`).
    Correspondence,
}

impl Speed {
    /// Every class, fastest first.
    pub const ALL: [Speed; 6] = [
        Speed::UltraBullet,
        Speed::Bullet,
        Speed::Blitz,
        Speed::Rapid,
        Speed::Classical,
        Speed::Correspondence,
    ];

    /// The class of a base time and increment in seconds.
    pub fn from_clock(base: u64, increment: u64) -> Speed {
        match base.saturating_add(increment.saturating_mul(40)) {
            0..30 => Speed::UltraBullet,
            30..180 => Speed::Bullet,
            180..480 => Speed::Blitz,
            480..1500 => Speed::Rapid,
            1500..21_600 => Speed::Classical,
            _ => Speed::Correspondence,
        }
    }

    /// The class of a `[TimeControl]` value: `base+increment` in seconds,
    /// or `-` for no clock (correspondence); `None` for anything else.
    pub fn from_time_control(value: &[u8]) -> Option<Speed> {
        let value = std::str::from_utf8(value).ok()?.trim();
        if value == "-" {
            return Some(Speed::Correspondence);
        }
        let (base, increment) = value.split_once('+')?;
        Some(Speed::from_clock(base.parse().ok()?, increment.parse().ok()?))
    }

    /// Its name on the command line: `ultrabullet`, `bullet`, ...
    pub fn name(self) -> &'static str {
        match self {
            Speed::UltraBullet => "ultrabullet",
            Speed::Bullet => "bullet",
            Speed::Blitz => "blitz",
            Speed::Rapid => "rapid",
            Speed::Classical => "classical",
            Speed::Correspondence => "correspondence",
        }
    }

    /// The class named `name` (any case).
    pub fn from_name(name: &str) -> Option<Speed> {
        Speed::ALL.into_iter().find(|s| s.name().eq_ignore_ascii_case(name))
    }
}

/// Which filter a game failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilterReason {
    /// `--min-elo`, `--max-elo`.
    Elo,
    /// `--min-avg-elo`, `--max-avg-elo`.
    AvgElo,
    /// `--speed`.
    Speed,
    /// `--date-from`, `--date-to`.
    Date,
    /// `--termination`.
    Termination,
    /// `--title`, `--exclude-title`.
    Title,
    /// `--result`.
    Result,
}

impl FilterReason {
    /// Its name in summaries.
    pub fn name(self) -> &'static str {
        match self {
            FilterReason::Elo => "elo",
            FilterReason::AvgElo => "avg-elo",
            FilterReason::Speed => "speed",
            FilterReason::Date => "date",
            FilterReason::Termination => "termination",
            FilterReason::Title => "title",
            FilterReason::Result => "result",
        }
    }
}

/// What the filters say of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Through every filter.
    Keep,
    /// Out: the value fails this filter.
    Out(FilterReason),
    /// Out: the game lacks the tag this filter needs.
    NoTag(FilterReason),
}

/// The tag values the filters read from one game (`None`: no such tag).
#[derive(Clone, Copy, Debug, Default)]
pub struct GameTags<'a> {
    /// `[WhiteElo]`.
    pub white_elo: Option<&'a [u8]>,
    /// `[BlackElo]`.
    pub black_elo: Option<&'a [u8]>,
    /// `[TimeControl]`.
    pub time_control: Option<&'a [u8]>,
    /// `[UTCDate]`, else `[Date]`.
    pub date: Option<&'a [u8]>,
    /// `[Termination]`.
    pub termination: Option<&'a [u8]>,
    /// `[Result]` (or the movetext's result).
    pub result: Option<&'a [u8]>,
    /// `[WhiteTitle]`.
    pub white_title: Option<&'a [u8]>,
    /// `[BlackTitle]`.
    pub black_title: Option<&'a [u8]>,
}

/// The filters of a run. The default lets every game through.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GameFilter {
    /// Both players rated at least this.
    pub min_elo: Option<u16>,
    /// Both players rated at most this.
    pub max_elo: Option<u16>,
    /// The players' mean rating at least this.
    pub min_avg_elo: Option<u16>,
    /// The players' mean rating at most this.
    pub max_avg_elo: Option<u16>,
    /// The game's speed one of these (empty: any).
    pub speeds: Vec<Speed>,
    /// Played on this day or later, `YYYY.MM.DD`.
    pub date_from: Option<String>,
    /// Played on this day or earlier, `YYYY.MM.DD`.
    pub date_to: Option<String>,
    /// `[Termination]` one of these, compared without case (empty: any).
    pub terminations: Vec<String>,
    /// `[Result]` one of these (empty: any).
    pub results: Vec<String>,
    /// A player holds one of these titles (`[WhiteTitle]`,
    /// `[BlackTitle]`), compared without case (empty: any game).
    pub titles: Vec<String>,
    /// No player holds one of these titles (`BOT` leaves bots' games out).
    pub exclude_titles: Vec<String>,
}

/// A rating tag's value, if it is one.
fn rating(value: Option<&[u8]>) -> Option<u16> {
    std::str::from_utf8(value?).ok()?.trim().parse().ok().filter(|&r| r > 0)
}

/// A full date `YYYY.MM.DD` (or `YYYY-MM-DD`, `YYYY/MM/DD`) written as
/// `YYYY.MM.DD`; `None` for anything else, a date with `??` included.
pub fn normalize_date(value: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(value).ok()?.trim();
    let parts: Vec<&str> = text.split(['.', '-', '/']).collect();
    let [y, m, d] = parts[..] else { return None };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    (digits(y, 4) && digits(m, 2) && digits(d, 2)).then(|| format!("{y}.{m}.{d}"))
}

impl GameFilter {
    /// No filter set.
    pub fn is_empty(&self) -> bool {
        *self == GameFilter::default()
    }

    /// Checks a game; see the module's documentation for the order.
    pub fn check(&self, tags: &GameTags<'_>) -> Verdict {
        use FilterReason as R;
        let bounded = |v: u16, lo: Option<u16>, hi: Option<u16>| {
            lo.is_none_or(|lo| v >= lo) && hi.is_none_or(|hi| v <= hi)
        };
        let ratings = || Some((rating(tags.white_elo)?, rating(tags.black_elo)?));
        if self.min_elo.is_some() || self.max_elo.is_some() {
            match ratings() {
                None => return Verdict::NoTag(R::Elo),
                Some((w, b))
                    if !(bounded(w, self.min_elo, self.max_elo)
                        && bounded(b, self.min_elo, self.max_elo)) =>
                {
                    return Verdict::Out(R::Elo);
                }
                _ => {}
            }
        }
        if self.min_avg_elo.is_some() || self.max_avg_elo.is_some() {
            match ratings() {
                None => return Verdict::NoTag(R::AvgElo),
                Some((w, b)) => {
                    // The mean, compared exactly: 2 * bound against the sum.
                    let sum = u32::from(w) + u32::from(b);
                    let low = self.min_avg_elo.is_some_and(|lo| sum < 2 * u32::from(lo));
                    let high = self.max_avg_elo.is_some_and(|hi| sum > 2 * u32::from(hi));
                    if low || high {
                        return Verdict::Out(R::AvgElo);
                    }
                }
            }
        }
        if !self.speeds.is_empty() {
            match tags.time_control.and_then(Speed::from_time_control) {
                None => return Verdict::NoTag(R::Speed),
                Some(s) if !self.speeds.contains(&s) => return Verdict::Out(R::Speed),
                _ => {}
            }
        }
        if self.date_from.is_some() || self.date_to.is_some() {
            match tags.date.and_then(normalize_date) {
                None => return Verdict::NoTag(R::Date),
                Some(d) => {
                    let early = self.date_from.as_ref().is_some_and(|from| d < *from);
                    let late = self.date_to.as_ref().is_some_and(|to| d > *to);
                    if early || late {
                        return Verdict::Out(R::Date);
                    }
                }
            }
        }
        if !self.terminations.is_empty() {
            match tags.termination.and_then(|t| std::str::from_utf8(t).ok()) {
                None => return Verdict::NoTag(R::Termination),
                Some(t) if !self.terminations.iter().any(|x| x.eq_ignore_ascii_case(t.trim())) => {
                    return Verdict::Out(R::Termination);
                }
                _ => {}
            }
        }
        if !self.titles.is_empty() || !self.exclude_titles.is_empty() {
            // No title tag is no title, not a missing value: most players
            // hold none.
            let held = |list: &[String]| {
                [tags.white_title, tags.black_title].into_iter().flatten().any(|t| {
                    let t = String::from_utf8_lossy(t);
                    list.iter().any(|x| x.eq_ignore_ascii_case(t.trim()))
                })
            };
            if (!self.titles.is_empty() && !held(&self.titles)) || held(&self.exclude_titles) {
                return Verdict::Out(R::Title);
            }
        }
        if !self.results.is_empty() {
            match tags.result.filter(|r| !r.is_empty()) {
                None => return Verdict::NoTag(R::Result),
                Some(r) if !self.results.iter().any(|x| x.as_bytes() == r) => {
                    return Verdict::Out(R::Result);
                }
                _ => {}
            }
        }
        Verdict::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_follow_lichess_classes() {
        let s = |tc: &str| Speed::from_time_control(tc.as_bytes());
        assert_eq!(s("15+0"), Some(Speed::UltraBullet));
        assert_eq!(s("0+1"), Some(Speed::Bullet)); // 40 s
        assert_eq!(s("60+0"), Some(Speed::Bullet));
        assert_eq!(s("179+0"), Some(Speed::Bullet));
        assert_eq!(s("180+0"), Some(Speed::Blitz)); // 180 is not under 180
        assert_eq!(s("120+2"), Some(Speed::Blitz)); // 200 s
        assert_eq!(s("300+3"), Some(Speed::Blitz)); // 420 s
        assert_eq!(s("300+5"), Some(Speed::Rapid)); // 500 s
        assert_eq!(s("900+15"), Some(Speed::Classical)); // 1,500 s
        assert_eq!(s("21600+0"), Some(Speed::Correspondence));
        assert_eq!(s("-"), Some(Speed::Correspondence));
        assert_eq!(s("?"), None);
        assert_eq!(s("300"), None);
    }

    fn tags<'a>(w: &'a str, b: &'a str, tc: &'a str, date: &'a str) -> GameTags<'a> {
        let some = |v: &'a str| (!v.is_empty()).then_some(v.as_bytes());
        GameTags {
            white_elo: some(w),
            black_elo: some(b),
            time_control: some(tc),
            date: some(date),
            termination: Some(b"Normal"),
            result: Some(b"1-0"),
            white_title: None,
            black_title: Some(b"BOT"),
        }
    }

    #[test]
    fn each_filter_counts_its_own_games() {
        let f = GameFilter { min_elo: Some(1500), max_elo: Some(2000), ..GameFilter::default() };
        assert_eq!(f.check(&tags("1500", "2000", "", "")), Verdict::Keep);
        assert_eq!(f.check(&tags("1499", "1800", "", "")), Verdict::Out(FilterReason::Elo));
        assert_eq!(f.check(&tags("1600", "?", "", "")), Verdict::NoTag(FilterReason::Elo));
        let f = GameFilter { min_avg_elo: Some(1500), ..GameFilter::default() };
        // (1400 + 1601) / 2 = 1500.5: in; (1400 + 1599) / 2 = 1499.5: out.
        assert_eq!(f.check(&tags("1400", "1601", "", "")), Verdict::Keep);
        assert_eq!(f.check(&tags("1400", "1599", "", "")), Verdict::Out(FilterReason::AvgElo));
        let f = GameFilter { speeds: vec![Speed::Blitz], ..GameFilter::default() };
        assert_eq!(f.check(&tags("", "", "300+0", "")), Verdict::Keep);
        assert_eq!(f.check(&tags("", "", "60+0", "")), Verdict::Out(FilterReason::Speed));
        assert_eq!(f.check(&tags("", "", "", "")), Verdict::NoTag(FilterReason::Speed));
        let f = GameFilter {
            date_from: Some("2016.05.01".into()),
            date_to: Some("2016.05.15".into()),
            ..GameFilter::default()
        };
        assert_eq!(f.check(&tags("", "", "", "2016.05.15")), Verdict::Keep);
        assert_eq!(f.check(&tags("", "", "", "2016.05.16")), Verdict::Out(FilterReason::Date));
        assert_eq!(f.check(&tags("", "", "", "2016.05.??")), Verdict::NoTag(FilterReason::Date));
        let f = GameFilter { terminations: vec!["time forfeit".into()], ..GameFilter::default() };
        assert_eq!(f.check(&tags("", "", "", "")), Verdict::Out(FilterReason::Termination));
        let f = GameFilter { results: vec!["1-0".into()], ..GameFilter::default() };
        assert_eq!(f.check(&tags("", "", "", "")), Verdict::Keep);
        // The first filter failed is the one counted.
        let f = GameFilter {
            min_elo: Some(2500),
            speeds: vec![Speed::Bullet],
            ..GameFilter::default()
        };
        assert_eq!(f.check(&tags("1500", "1500", "600+0", "")), Verdict::Out(FilterReason::Elo));
        let f = GameFilter { exclude_titles: vec!["bot".into()], ..GameFilter::default() };
        assert_eq!(f.check(&tags("", "", "", "")), Verdict::Out(FilterReason::Title));
        let f = GameFilter { titles: vec!["GM".into()], ..GameFilter::default() };
        assert_eq!(f.check(&tags("", "", "", "")), Verdict::Out(FilterReason::Title));
        let f = GameFilter { titles: vec!["BOT".into()], ..GameFilter::default() };
        assert_eq!(f.check(&tags("", "", "", "")), Verdict::Keep);
        let f = GameFilter { exclude_titles: vec!["GM".into()], ..GameFilter::default() };
        assert_eq!(f.check(&tags("", "", "", "")), Verdict::Keep);
        assert!(GameFilter::default().is_empty());
    }

    #[test]
    fn dates_are_read_whole_or_not_at_all() {
        assert_eq!(normalize_date(b"2016-05-01").as_deref(), Some("2016.05.01"));
        assert_eq!(normalize_date(b"2016.05.01").as_deref(), Some("2016.05.01"));
        assert_eq!(normalize_date(b"2016.05.??"), None);
        assert_eq!(normalize_date(b"2016"), None);
    }
}
