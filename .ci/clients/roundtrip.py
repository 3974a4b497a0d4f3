"""A round trip through the Python package openapi-python-client generates, against the
running shop, reading the fields of answers and of problem bodies from the typed models.

    python3 roundtrip.py DOC BASE_URL

Generates the package from DOC into a temporary directory, imports it, and registers,
logs in, creates orders, lists them by cursor with a filter and a sort, reads one and its
304, patches, replaces and deletes it, and reads the problems of a 400, a 403 and a 404.
A generated call answers a union of its documented types (the model, `Problem`); Python
code tells them apart with `isinstance`, as these do.
"""

import importlib
import subprocess
import sys
import tempfile
import uuid


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    doc, base = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as work:
        subprocess.run(
            [sys.executable, "-m", "openapi_python_client", "generate", "--path", doc,
             "--output-path", f"{work}/shop_client", "--meta", "none"],
            check=True, stdout=subprocess.DEVNULL,
        )
        sys.path.insert(0, work)
        roundtrip(base)


def roundtrip(base):
    client_module = importlib.import_module("shop_client")
    from shop_client.api.auth import login
    from shop_client.api.order import create_order, delete_order, get_order, list_order, replace_order, update_order
    from shop_client.api.user import create_user
    from shop_client.models import Login, OrderCreate, OrderPatch, OrderReplace, Problem, UserCreate
    from shop_client.models.list_order_sort_item import ListOrderSortItem
    from shop_client.models.list_order_status import ListOrderStatus

    anonymous = client_module.Client(base_url=base)

    def account(name):
        email = f"{name}-{uuid.uuid4().hex}@example.com"
        password = "correct horse battery staple"
        made = create_user.sync_detailed(client=anonymous, body=UserCreate(name=name, email=email, password=password))
        assert made.status_code == 201, made.content
        assert made.parsed.email == email, "the new account reads back"
        token = login.sync(client=anonymous, body=Login(email=email, password=password))
        assert not isinstance(token, Problem), token
        return client_module.AuthenticatedClient(base_url=base, token=token.access_token)

    ann, bob = account("ann"), account("bob")

    ids = []
    for cents in (100, 200, 300):
        order = create_order.sync(client=ann, body=OrderCreate(total_cents=cents))
        assert not isinstance(order, Problem), order
        assert order.total_cents == cents and order.status.value == "pending"
        ids.append(order.id)
    sort = [ListOrderSortItem.CREATED_AT_DESC]
    first = list_order.sync(client=ann, status=ListOrderStatus.PENDING, sort=sort, limit=2)
    assert not isinstance(first, Problem), first
    assert first.has_more and first.next_cursor, "a cursor while more follow"
    rest = list_order.sync(client=ann, status=ListOrderStatus.PENDING, sort=sort, limit=2, cursor=first.next_cursor)
    assert not isinstance(rest, Problem), rest
    seen = [o.id for o in first.data + rest.data]
    assert seen == list(reversed(ids)), f"newest first, each once: {seen}"

    order_id = ids[0]
    read = get_order.sync_detailed(order_id, client=ann)
    assert read.status_code == 200 and read.parsed.id == order_id
    etag = read.headers["etag"]
    again = get_order.sync_detailed(order_id, client=ann, if_none_match=etag)
    assert again.status_code == 304, again.status_code
    patched = update_order.sync(order_id, client=ann, body=OrderPatch(note="gift"))
    assert not isinstance(patched, Problem), patched
    assert patched.note == "gift" and patched.total_cents == 100, "a patch merges"
    replaced = replace_order.sync(order_id, client=ann, body=OrderReplace())
    assert not isinstance(replaced, Problem), replaced
    assert replaced.note is None, "a replace without the note clears it"

    invalid = create_order.sync(client=ann, body=OrderCreate(total_cents=-1))
    assert isinstance(invalid, Problem), invalid
    assert invalid.status == 400 and [e.field for e in invalid.errors] == ["total_cents"], invalid
    theirs = get_order.sync(order_id, client=bob)
    assert isinstance(theirs, Problem) and theirs.status == 403, theirs
    assert delete_order.sync_detailed(order_id, client=ann).status_code == 204
    gone = get_order.sync(order_id, client=ann)
    assert isinstance(gone, Problem) and gone.status == 404 and gone.title, gone
    print("openapi-python-client: answers' and problems' fields read from their models, cursor paging, 304, "
          "PATCH, PUT, DELETE")


if __name__ == "__main__":
    main()
