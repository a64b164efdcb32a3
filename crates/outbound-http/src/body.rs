//! Reading a receiver's answer without trusting its size.

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Body;

/// Reads at most `cap` bytes of `body` as lossy UTF-8. A body that fits is read to its end, so
/// the connection can go back to the pool; past the cap the rest is dropped unread.
pub(crate) async fn read_capped<B>(mut body: B, cap: usize) -> Result<String, B::Error>
where
    B: Body<Data = Bytes> + Unpin,
{
    let mut kept = Vec::with_capacity(cap.min(8 * 1024));
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        let room = cap.saturating_sub(kept.len());
        if let Some(fits) = data.get(..room).filter(|_| data.len() > room) {
            kept.extend_from_slice(fits);
            break;
        }
        kept.extend_from_slice(&data);
    }
    Ok(String::from_utf8_lossy(&kept).into_owned())
}

#[cfg(test)]
mod tests {
    use http_body_util::Full;

    use super::*;

    async fn read(body: &'static str, cap: usize) -> String {
        read_capped(Full::new(Bytes::from_static(body.as_bytes())), cap)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn bodies_are_cut_at_the_cap() {
        assert_eq!(read("hello", 64).await, "hello");
        assert_eq!(read("hello", 5).await, "hello");
        assert_eq!(read("hello", 3).await, "hel");
        assert_eq!(read("hello", 0).await, "");
    }

    #[tokio::test]
    async fn a_cut_inside_a_character_stays_readable() {
        assert_eq!(read("añb", 2).await, "a\u{fffd}");
    }
}
