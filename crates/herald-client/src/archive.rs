//! Archive queries from the client: a name's samples between two times (paged, or folded into
//! buckets for a chart), the values of many names at one instant, and log records with
//! filters. A long range is read page by page ([`Pages`]), so neither side holds it whole.

use herald_proto::archive::{
    ArchiveReply, ArchiveRequest, AtQuery, Bucket, BucketQuery, LogQuery, Page, SampleQuery,
    StoredRecord,
};
use herald_proto::Frame;

use crate::client::Client;
use crate::error::ClientError;

/// Records per page unless a query says otherwise.
pub const DEFAULT_PAGE_RECORDS: u32 = 10_000;

impl Client {
    /// Sends one archive query and returns the server's answer. Stored records the archive
    /// left out because they do not decode are logged and counted
    /// ([`Client::archive_skipped`]); they never fail the query.
    ///
    /// # Errors
    /// [`ClientError::Server`] with code `bad_query` (empty range, bad limit, bad pattern) or
    /// `archive` (no archive, or its store failed), a timeout, or the connection's error.
    pub async fn query(&self, request: ArchiveRequest) -> Result<ArchiveReply, ClientError> {
        let answer = self
            .handle
            .control(|cid| Frame::Query {
                cid,
                request: request.clone(),
            })
            .await?;
        match answer {
            Frame::QueryReply { reply, skipped, .. } => {
                if skipped > 0 {
                    self.count_archive_skipped(skipped);
                    tracing::warn!(
                        skipped,
                        "the archive left out stored records that do not decode"
                    );
                }
                Ok(reply)
            }
            other => Err(ClientError::Closed(format!(
                "unexpected {} frame in answer to QUERY",
                other.frame_type().name()
            ))),
        }
    }

    /// Returns the pages of `query.name`'s samples from `query.after` on.
    pub fn sample_pages(&self, query: SampleQuery) -> Pages<'_> {
        Pages::new(self, ArchiveRequest::Samples(query))
    }

    /// Returns the pages of log records passing `query`'s filters.
    pub fn log_pages(&self, query: LogQuery) -> Pages<'_> {
        Pages::new(self, ArchiveRequest::Logs(query))
    }

    /// Returns every sample of `name` in `[from, to)`, reading page by page.
    ///
    /// # Errors
    /// As [`Client::query`].
    pub async fn samples(
        &self,
        name: &str,
        from: i64,
        to: i64,
    ) -> Result<Vec<StoredRecord>, ClientError> {
        let mut pages = self.sample_pages(SampleQuery {
            name: name.to_string(),
            from,
            to,
            after: None,
            limit: DEFAULT_PAGE_RECORDS,
        });
        let mut all = Vec::new();
        while let Some(page) = pages.next_page().await? {
            all.extend(page.records);
        }
        Ok(all)
    }

    /// Returns `query.name`'s samples folded into `query.buckets` time buckets.
    ///
    /// # Errors
    /// As [`Client::query`].
    pub async fn buckets(&self, query: BucketQuery) -> Result<Vec<Bucket>, ClientError> {
        match self.query(ArchiveRequest::Buckets(query)).await? {
            ArchiveReply::Buckets(buckets) => Ok(buckets),
            other => Err(mismatch(&other)),
        }
    }

    /// Returns the last sample at or before `time` of each of `names`, in that order.
    ///
    /// # Errors
    /// As [`Client::query`].
    pub async fn values_at(
        &self,
        names: &[String],
        time: i64,
    ) -> Result<Vec<Option<StoredRecord>>, ClientError> {
        let query = AtQuery {
            names: names.to_vec(),
            time,
        };
        match self.query(ArchiveRequest::At(query)).await? {
            ArchiveReply::At(found) => Ok(found),
            other => Err(mismatch(&other)),
        }
    }
}

fn mismatch(reply: &ArchiveReply) -> ClientError {
    let what = match reply {
        ArchiveReply::Page(_) => "a page",
        ArchiveReply::Buckets(_) => "buckets",
        ArchiveReply::At(_) => "values at an instant",
    };
    ClientError::Closed(format!("the server answered with {what} to another query"))
}

/// The pages of a samples or logs query, fetched one at a time.
#[derive(Debug)]
pub struct Pages<'a> {
    client: &'a Client,
    request: ArchiveRequest,
    done: bool,
}

impl<'a> Pages<'a> {
    fn new(client: &'a Client, request: ArchiveRequest) -> Pages<'a> {
        Pages {
            client,
            request,
            done: false,
        }
    }

    /// Fetches the next page; `None` once the range is exhausted. A page may be short (or
    /// empty) when the server stopped at its size or scan budget; keep asking.
    ///
    /// # Errors
    /// As [`Client::query`].
    pub async fn next_page(&mut self) -> Result<Option<Page>, ClientError> {
        if self.done {
            return Ok(None);
        }
        let page = match self.client.query(self.request.clone()).await? {
            ArchiveReply::Page(page) => page,
            other => return Err(mismatch(&other)),
        };
        self.done = !self.request.resume_after(page.next);
        Ok(Some(page))
    }
}
