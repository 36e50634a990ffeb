//! Memory maps that survive their file being truncated underneath them.
//!
//! Reading a page of a file mapping past the file's current end raises
//! SIGBUS, which kills the process: the classic risk of mapping a file that
//! another process may truncate (a download restarted, a log rotated, a
//! user's `> file`). kibitz maps its inputs and its `.kbz` files, so it
//! guards every map it makes:
//!
//! * A SIGBUS handler, installed once, looks up the faulting address in a
//!   fixed table of guarded ranges (no allocation, no locks: atomics only).
//!   If the address is in a guarded map, it maps a page of zeros over the
//!   faulting page (`mmap` with `MAP_FIXED`, anonymous, read-only) and
//!   returns: the read is retried and sees zeros. The map's fault counter
//!   goes up, so the reader can say what happened.
//! * An address outside every guarded map is not ours: the handler puts
//!   back the action that was there before (Rust's runtime installs one for
//!   stack overflows) and returns, so the fault repeats and is handled, or
//!   kills the process, exactly as it would have without us.
//!
//! Readers check [`GuardedMap::shrunk`] (a fault happened, or the file is
//! now shorter than the map) and report the input as cut short instead of
//! trusting the zeros. The guard is removed from the table before the map
//! is unmapped (field order in [`GuardedMap`]), so a later, unrelated
//! mapping at the same address is never patched.

use std::{
    fs::File,
    ops::Deref,
    sync::{
        Once,
        atomic::{AtomicUsize, Ordering},
    },
};

use memmap2::Mmap;

/// Maps guarded at once (inputs in flight plus `.kbz` readers); a map that
/// finds the table full is used unguarded (the process is then only as safe
/// as an ordinary mapping).
const SLOTS: usize = 64;

static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static LENS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static FAULTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();

/// The SIGBUS action in place before ours, restored for faults not ours.
/// Written once, before our handler is installed; only read afterwards.
static mut PREVIOUS: Option<libc::sigaction> = None;

extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // Safety: the kernel passes a valid siginfo_t for a SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for slot in 0..SLOTS {
        let start = STARTS[slot].load(Ordering::Acquire);
        let len = LENS[slot].load(Ordering::Acquire);
        if start != 0 && addr >= start && addr < start + len {
            let at = addr & !(page - 1);
            // Safety: `at` is a page inside a live read-only mapping that
            // we own (it is in the table only while the map exists); mapping
            // zeros over it changes what reads return, nothing else. mmap is
            // a plain system call, safe to make from a signal handler.
            let p = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                FAULTS[slot].fetch_add(1, Ordering::Relaxed);
                return;
            }
            break;
        }
    }
    // Not ours (or patching failed): hand the fault back to whoever had it.
    // Safety: PREVIOUS was written before this handler was installed and is
    // never written again; restoring an action is async-signal-safe.
    unsafe {
        let previous = (*std::ptr::addr_of!(PREVIOUS)).as_ref();
        match previous {
            Some(action) => {
                libc::sigaction(libc::SIGBUS, action, std::ptr::null_mut());
            }
            None => {
                libc::signal(libc::SIGBUS, libc::SIG_DFL);
            }
        }
    }
}

fn install() {
    INSTALL.call_once(|| {
        // Safety: plain libc calls with valid pointers; PREVIOUS is written
        // here, before the handler that reads it exists.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) == 0 {
                *std::ptr::addr_of_mut!(PREVIOUS) = Some(old);
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

/// A slot of the table, freed when dropped.
struct Guard {
    slot: Option<usize>,
}

impl Guard {
    fn register(start: usize, len: usize) -> Guard {
        install();
        for slot in 0..SLOTS {
            if STARTS[slot]
                .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                FAULTS[slot].store(0, Ordering::Relaxed);
                LENS[slot].store(len, Ordering::Release);
                STARTS[slot].store(start, Ordering::Release);
                return Guard { slot: Some(slot) };
            }
        }
        Guard { slot: None }
    }

    fn faults(&self) -> usize {
        self.slot.map_or(0, |s| FAULTS[s].load(Ordering::Relaxed))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            LENS[slot].store(0, Ordering::Release);
            STARTS[slot].store(0, Ordering::Release);
        }
    }
}

/// A read-only file map whose pages past a truncation read as zeros
/// instead of killing the process. Dereferences to the [`Mmap`].
pub struct GuardedMap {
    // Declared first: dropped (unregistered) before the map is unmapped.
    guard: Guard,
    map: Mmap,
    file: File,
}

impl GuardedMap {
    /// Maps `file` read-only and guards the map.
    ///
    /// # Safety
    /// As for [`Mmap::map`]: the caller reads the map as plain bytes and
    /// accepts that another process may change the file's contents; a
    /// truncation is what the guard turns from a crash into zeros.
    pub unsafe fn map(file: File) -> std::io::Result<GuardedMap> {
        // Safety: forwarded to the caller.
        let map = unsafe { Mmap::map(&file) }?;
        let guard = Guard::register(map.as_ptr() as usize, map.len());
        Ok(GuardedMap { guard, map, file })
    }

    /// Pages that were patched with zeros after a fault (0 if none).
    pub fn faults(&self) -> usize {
        self.guard.faults()
    }

    /// The file's current size, if it can be read.
    pub fn file_len(&self) -> Option<u64> {
        self.file.metadata().ok().map(|m| m.len())
    }

    /// Whether the file is no longer whole: a read faulted past its end, or
    /// it is now shorter than the map. Returns the current size when known.
    pub fn shrunk(&self) -> Option<u64> {
        let now = self.file_len();
        let short = now.is_some_and(|n| n < self.map.len() as u64);
        (self.faults() > 0 || short).then(|| now.unwrap_or(0))
    }

    /// Whether the file grew after it was mapped (the new bytes are not in
    /// the map). Returns the current size.
    pub fn grown(&self) -> Option<u64> {
        self.file_len().filter(|&n| n > self.map.len() as u64)
    }
}

impl std::fmt::Debug for GuardedMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardedMap")
            .field("len", &self.map.len())
            .field("guarded", &self.guard.slot.is_some())
            .field("faults", &self.faults())
            .finish()
    }
}

impl Deref for GuardedMap {
    type Target = Mmap;
    fn deref(&self) -> &Mmap {
        &self.map
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::GuardedMap;

    #[test]
    fn truncated_file_reads_zeros_and_reports() {
        let dir = std::env::temp_dir().join(format!("kibitz-mapguard-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("shrinks");
        let page = 4096;
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&vec![b'x'; page * 8]).unwrap();
        drop(f);
        // Safety: a file this test owns, read as plain bytes.
        let map = unsafe { GuardedMap::map(std::fs::File::open(&path).unwrap()) }.unwrap();
        assert_eq!(map[page * 6], b'x');
        assert_eq!(map.shrunk(), None);
        // Truncate underneath the map: a page past the new end would SIGBUS.
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(page as u64).unwrap();
        let tail = std::hint::black_box(&map[page * 7..page * 8]);
        assert!(tail.iter().all(|&b| b == 0));
        assert!(map.faults() >= 1);
        assert_eq!(map.shrunk(), Some(page as u64));
        assert_eq!(map[0], b'x');
        drop(map);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn grown_file_is_reported() {
        let dir = std::env::temp_dir().join(format!("kibitz-mapguard-g-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("grows");
        std::fs::write(&path, b"abc").unwrap();
        // Safety: a file this test owns, read as plain bytes.
        let map = unsafe { GuardedMap::map(std::fs::File::open(&path).unwrap()) }.unwrap();
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"def").unwrap();
        assert_eq!(map.grown(), Some(6));
        assert_eq!(map.shrunk(), None);
        drop(map);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
