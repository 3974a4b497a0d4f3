//! What every generated list request builder has beside its filters, written once here
//! rather than in every generated client (half of each builder's lines).

/// The methods of a generated list request builder `$builder`, a
/// `pub struct $builder(List<$model>)`, but for its filters: the parameters of its paging
/// style (`cursor(<id type>)`, `page` or `offset`; `$size_doc` documents the page size),
/// `sort` over its sort enum `$sort`, `send`, `stream` and `into_list`.
#[macro_export]
macro_rules! list_builder {
    ($builder:ident, $model:ty, $sort:ident, cursor($id:ty), $size_doc:literal) => {
        impl $builder {
            #[doc = $size_doc]
            pub fn limit(self, limit: u32) -> $builder {
                $builder(self.0.param($crate::query::LIMIT, limit))
            }

            /// Start after the page this cursor (a page's `next_cursor`) ends.
            pub fn cursor(self, cursor: impl ::core::convert::Into<::std::string::String>) -> $builder {
                $builder(self.0.param($crate::query::CURSOR, ::core::convert::Into::<::std::string::String>::into(cursor)))
            }

            /// Start after the record with this id.
            pub fn starting_after(self, id: $id) -> $builder {
                $builder(self.0.param($crate::query::STARTING_AFTER, id))
            }
        }

        $crate::list_builder!(@every $builder, $model, $sort);
    };
    ($builder:ident, $model:ty, $sort:ident, page, $size_doc:literal) => {
        impl $builder {
            /// The page to fetch, from 1.
            pub fn page(self, page: u64) -> $builder {
                $builder(self.0.param($crate::query::PAGE, page))
            }

            #[doc = $size_doc]
            pub fn per_page(self, per_page: u32) -> $builder {
                $builder(self.0.param($crate::query::PER_PAGE, per_page))
            }
        }

        $crate::list_builder!(@every $builder, $model, $sort);
    };
    ($builder:ident, $model:ty, $sort:ident, offset, $size_doc:literal) => {
        impl $builder {
            #[doc = $size_doc]
            pub fn limit(self, limit: u32) -> $builder {
                $builder(self.0.param($crate::query::LIMIT, limit))
            }

            /// Records to skip.
            pub fn offset(self, offset: u64) -> $builder {
                $builder(self.0.param($crate::query::OFFSET, offset))
            }
        }

        $crate::list_builder!(@every $builder, $model, $sort);
    };
    (@every $builder:ident, $model:ty, $sort:ident) => {
        impl $builder {
            /// Sort keys, most significant first; ties are broken by id.
            pub fn sort(self, keys: impl ::core::iter::IntoIterator<Item = $sort>) -> $builder {
                $builder(self.0.sort(keys.into_iter().map($sort::as_str)))
            }

            /// Fetches one page.
            pub async fn send(self) -> ::core::result::Result<$crate::Page<$model>, $crate::Error> {
                self.0.send().await
            }

            /// Every record from this request's first page on, page after page.
            pub fn stream(
                self,
            ) -> impl $crate::__private::futures_core::Stream<Item = ::core::result::Result<$model, $crate::Error>>
            + ::core::marker::Send
            + 'static {
                self.0.stream()
            }

            /// The untyped request, for parameters this builder does not cover.
            pub fn into_list(self) -> $crate::List<$model> {
                self.0
            }
        }
    };
}
