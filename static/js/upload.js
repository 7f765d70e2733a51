// Drag-and-drop for the upload form: a dropped file goes into the normal <input type="file">,
// and the form still submits as plain multipart without this script.
(function () {
  "use strict";
  var zone = document.getElementById("dropzone");
  if (!zone) return;
  var input = zone.querySelector('input[type="file"]');
  var label = document.getElementById("dropzone-file");

  function showName() {
    if (!label) return;
    var f = input.files && input.files[0];
    label.textContent = f ? f.name + " (" + (f.size / 1048576).toFixed(2) + " MB)" : "";
    zone.classList.toggle("has-file", !!f);
  }

  ["dragenter", "dragover"].forEach(function (type) {
    zone.addEventListener(type, function (e) {
      e.preventDefault();
      zone.classList.add("dragover");
    });
  });
  ["dragleave", "dragend", "drop"].forEach(function (type) {
    zone.addEventListener(type, function () { zone.classList.remove("dragover"); });
  });
  zone.addEventListener("drop", function (e) {
    e.preventDefault();
    if (e.dataTransfer && e.dataTransfer.files.length) {
      input.files = e.dataTransfer.files;
      showName();
    }
  });
  input.addEventListener("change", showName);

  var form = document.getElementById("upload-form");
  if (form) {
    form.addEventListener("submit", function () {
      var button = form.querySelector('button[type="submit"]');
      if (button && input.files && input.files.length) {
        button.disabled = true;
        button.textContent = "Uploading…";
      }
    });
  }

  // Loading the demo takes a few seconds (Adult has 30,162 rows): say so on the button.
  var demo = document.getElementById("load-demo");
  if (demo && demo.form) {
    demo.form.addEventListener("submit", function () {
      demo.disabled = true;
      demo.textContent = "Loading the demo data…";
    });
  }
})();
