<%@ Page Language="C#" %><%
// What the app sees of a request: its headers, one per line, and its body's length.
Response.ContentType = "text/plain";
foreach (string name in Request.Headers) {
  foreach (string value in Request.Headers.GetValues(name)) Response.Write(name + ": " + value + "\n");
}
Response.Write("body-length: " + Request.InputStream.Length + "\n");
%>
