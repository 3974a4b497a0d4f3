//! A future whose body is compiled once per crate, not once per piece of it.
//!
//! rustc compiles a crate in pieces (codegen units, 16 in a release build) and gives every
//! piece that awaits an `async fn` a copy of its body of its own, as it does for any
//! closure: the body of an `async fn` is one. Where LLVM inlines the body, the copies cost
//! nothing; where it does not (a large body, such as opening a PostgreSQL connection), each
//! copy is code the executable carries, and the copies of one body lie far apart, so a
//! process that runs a little of each maps more of the executable. Polling the body through
//! [`Outlined`], whose `poll` is never inlined and so compiled once, leaves one copy: the
//! pieces call it instead. A generated crate's release profile compiles in one unit, where
//! there are no such copies; a hand-written service on the runtime, or a workspace that
//! keeps cargo's default, still has them.
//!
//! The same holds between crates: a service's crate instantiates the runtime's generic
//! operations with its own input types, and gets a copy of every body they await, down to
//! the database driver's. Such a body returned as a [`Boxed`] future is compiled in the
//! runtime alone, behind the pointer to its `poll` that the service's crate calls.
//!
//! And between tasks: tokio compiles its task machinery (the task's cell, its harness, its
//! waker's table, for each kind of scheduler) for every type of future it spawns. The
//! runtime's tasks are spawned through [`spawn`], as the one type of a [`Boxed`] future, so
//! that machinery is compiled once.

use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::task::JoinHandle;

/// A future polled through a pointer, so its body is compiled where it is made ([module
/// docs](self)): for the work that generic code awaits once it has typed what it reads.
pub(crate) type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Spawns `work` on the current runtime as a task of the one type every task of the
/// runtime's has ([module docs](self)).
pub(crate) fn spawn(work: impl Future<Output = ()> + Send + 'static) -> JoinHandle<()> {
    tokio::spawn(Box::pin(work) as Boxed<'static, ()>)
}

/// [`spawn`] on the runtime `on`.
pub(crate) fn spawn_on(on: &tokio::runtime::Handle, work: impl Future<Output = ()> + Send + 'static) -> JoinHandle<()> {
    on.spawn(Box::pin(work) as Boxed<'static, ()>)
}

/// Runs `work` on a blocking thread, as a task of one type for each type of result.
pub(crate) fn spawn_blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    tokio::task::spawn_blocking(Box::new(work) as Box<dyn FnOnce() -> T + Send>)
}

pin_project_lite::pin_project! {
    /// `F`, polled through one function of its own ([module docs](self)).
    pub(crate) struct Outlined<F> {
        #[pin]
        body: F,
    }
}

impl<F: Future> Outlined<F> {
    pub(crate) fn new(body: F) -> Self {
        Outlined { body }
    }
}

impl<F: Future> Future for Outlined<F> {
    type Output = F::Output;

    // Never inlined: an inlinable `poll` would be copied into every piece, with the body.
    #[inline(never)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.project().body.poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::Outlined;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::{Context, Poll, Waker};

    /// Sets its flag when dropped.
    struct Dropped(Arc<AtomicBool>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_body_that_waits_is_polled_again_and_its_output_given() {
        let mut cx = Context::from_waker(Waker::noop());
        let (tell, told) = tokio::sync::oneshot::channel();
        let mut outlined = std::pin::pin!(Outlined::new(async move { told.await.map(|n: u32| n * 2) }));
        assert!(outlined.as_mut().poll(&mut cx).is_pending());
        tell.send(21).unwrap();
        assert_eq!(outlined.as_mut().poll(&mut cx), Poll::Ready(Ok(42)));
    }

    #[test]
    fn a_body_dropped_before_its_end_drops_what_it_holds() {
        let mut cx = Context::from_waker(Waker::noop());
        let dropped = Arc::new(AtomicBool::new(false));
        let held = Dropped(dropped.clone());
        let mut outlined = Box::pin(Outlined::new(async move {
            let _held = held;
            std::future::pending::<()>().await;
        }));
        assert!(outlined.as_mut().poll(&mut cx).is_pending());
        assert!(!dropped.load(Ordering::SeqCst), "held while the body waits");
        drop(outlined);
        assert!(dropped.load(Ordering::SeqCst), "and dropped with it");
    }

    /// A task spawned boxed is a task like any: it runs, and aborting it (as the deadline
    /// ticker is at shutdown) drops what it holds; blocking work gives back its result.
    #[tokio::test]
    async fn tasks_spawned_boxed_run_end_when_aborted_and_give_their_results() {
        let (tell, told) = tokio::sync::oneshot::channel();
        super::spawn(async move { tell.send(7).unwrap() }).await.unwrap();
        assert_eq!(told.await, Ok(7));

        let dropped = Arc::new(AtomicBool::new(false));
        let held = Dropped(dropped.clone());
        let waiting = super::spawn_on(&tokio::runtime::Handle::current(), async move {
            let _held = held;
            std::future::pending::<()>().await;
        });
        waiting.abort();
        assert!(waiting.await.unwrap_err().is_cancelled());
        assert!(dropped.load(Ordering::SeqCst), "what the task held went with it");

        assert_eq!(super::spawn_blocking(|| "hashed".len()).await.unwrap(), 6);
    }
}
